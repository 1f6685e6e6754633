import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, type BrowserContextOptions, chromium, type Page } from 'playwright-core';

/** Debian's Chromium (scripts/install-chromium.sh); playwright-core drives it and never downloads a browser. */
export const CHROMIUM_PATH = '/usr/bin/chromium';

/**
 * Whether browser tests can run. In CI (CI=true) a missing Chromium is an error, so that the tests cannot pass by
 * not running; on a developer's machine they are skipped with a loud warning.
 */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  const message = `Chromium not found at ${CHROMIUM_PATH}; install it with: bash scripts/install-chromium.sh`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`\n${'!'.repeat(100)}\nSKIPPING the browser tests. ${message}\n${'!'.repeat(100)}\n`);
  return false;
}

/** `describe` for the browser tests: they run where Chromium is, and are skipped (loudly) or fail as above where not. */
export function describeInBrowser(name: string, tests: () => void): void {
  (chromiumAvailable() ? describe : describe.skip)(name, tests);
}

export interface HeadlessBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Headless Chromium with a fresh profile and nothing running in the background. Every host but localhost and 127.0.0.1
 * fails to resolve, so a page can reach only this machine. `options` adds to the context's (e.g. `httpCredentials`).
 */
export async function launchChromium(options: BrowserContextOptions = {}): Promise<HeadlessBrowser> {
  const profile = await mkdtemp(path.join(os.tmpdir(), 'chromium-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      // CI containers often have a small /dev/shm; Chromium then crashes unless it uses the temp folder instead.
      '--disable-dev-shm-usage',
      '--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1',
    ],
    viewport: { width: 1360, height: 900 },
    locale: 'de-CH',
    timezoneId: 'Europe/Zurich',
    ...options,
  });
  return {
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/**
 * A page as the browser tests drive it: each step waits at most 15 s for what the page shows, so that a step that
 * cannot happen fails in seconds, not in Jest's minute; and what goes wrong in it is collected into `errors`
 * (uncaught errors and errors on the console). Chromium also logs each 4xx answer on the console ("Failed to load
 * resource"); the admin page shows those itself, so they do not count.
 */
export function watchPage(page: Page, errors: string[]): void {
  page.setDefaultTimeout(15_000);
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(message.text());
  });
}
