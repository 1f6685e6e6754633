import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { projectRoot } from '../../src/config';
import { describeInBrowser, type HeadlessBrowser, launchChromium, watchPage } from '../support/browser';
import { STAFF, startTestApp, type TestApp } from '../support/test-app';
import { type AttemptAnswer, insertAttempt, insertEndpoint, insertEvent } from '../support/webhook-rows';

/*
 * The failing endpoint's banner in Chromium, through a streak's transitions: failing for less than
 * ENDPOINT_FAILING_AFTER_MINUTES (no banner), for longer (the banner, with the last success and the last error, the
 * subscriber's body shown as text), then one success (gone). The app's clock stands at 2025-07-15T10:30:00Z.
 */

const HOSTILE_BODY = '<img src=x onerror="window.__pwned=1">Bad Gateway from upstream';

describeInBrowser('the failing endpoint banner (headless Chromium)', () => {
  let app: TestApp;
  let browser: HeadlessBrowser;
  let page: Page;
  let eventId: number;
  let attemptNumber = 0;
  const pageErrors: string[] = [];

  beforeAll(async () => {
    app = await startTestApp({ ENDPOINT_FAILING_AFTER_MINUTES: '30' });
    ({ id: eventId } = await insertEvent(app.db, await insertEndpoint(app.db, { url: 'https://crm.example.org/hooks' })));
    browser = await launchChromium();
    page = await browser.context.newPage();
    watchPage(page, pageErrors);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  const attempt = (startedAt: string, outcome: 'delivered' | 'failed', answer?: AttemptAnswer) =>
    insertAttempt(app.db, eventId, ++attemptNumber, startedAt, outcome, answer);

  /** Runs `action` and waits for the page to have read the endpoint's state after it. */
  async function afterBannerRead(action: () => Promise<unknown>) {
    await Promise.all([page.waitForResponse((response) => response.url().endsWith('/admin/api/endpoint-failing')), action()]);
    // The banner is set in the same task as the answer is read.
    await page.evaluate('new Promise((resolve) => setTimeout(resolve, 0))');
  }

  test('hidden while failing for less than N minutes', async () => {
    await attempt('2025-07-15T09:00:00Z', 'delivered', { code: 200 });
    await attempt('2025-07-15T10:20:00Z', 'failed', { code: 502, body: HOSTILE_BODY });
    await page.goto(`${app.baseUrl}/admin/`);
    await page.locator('#login-view').waitFor();
    await page.fill('#login-form [name=username]', STAFF.username);
    await page.fill('#login-form [name=password]', STAFF.password);
    await afterBannerRead(() => page.click('#login-form button[type=submit]'));
    await page.locator('#events-view').waitFor();
    expect(await page.locator('#failing-banner').isHidden()).toBe(true);
  });

  test('shown on every view once every attempt has failed for N minutes, with the last success and the last error', async () => {
    await attempt('2025-07-15T10:00:00Z', 'failed', { error: 'connect ECONNREFUSED 203.0.113.7:443' });
    await afterBannerRead(() => page.click('#refresh'));
    const banner = page.locator('#failing-banner');
    await banner.waitFor();
    const text = await banner.innerText();
    expect(text).toContain('Der Endpunkt schlägt seit mehr als 30 Minuten fehl');
    // Zurich time: the streak's start (10:00Z), the last success (09:00Z) and the last error (10:20Z).
    expect(text).toMatch(/Seit 15\.07\.2025, 12:00 ist jeder Zustellversuch fehlgeschlagen/);
    expect(text).toMatch(/Letzte erfolgreiche Zustellung: 15\.07\.2025, 11:00/);
    expect(text).toMatch(/Letzter Fehler: HTTP 502 – <img src=x onerror="window.__pwned=1">Bad Gateway from upstream \(15\.07\.2025, 12:20\)/);
    expect(await banner.locator('img').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    await mkdir(path.join(projectRoot, 'test-results'), { recursive: true });
    await page.screenshot({ path: path.join(projectRoot, 'test-results', 'admin-failing-banner.png'), fullPage: true });

    await afterBannerRead(() => page.goto(`${app.baseUrl}/admin/#/health`));
    await page.locator('#health-view').waitFor();
    expect(await banner.isVisible()).toBe(true);
  });

  test('gone after one attempt delivers, and when signed out', async () => {
    await attempt('2025-07-15T10:25:00Z', 'delivered', { code: 204 });
    await afterBannerRead(() => page.goto(`${app.baseUrl}/admin/#/events`));
    await page.locator('#events-view').waitFor();
    expect(await page.locator('#failing-banner').isHidden()).toBe(true);

    await attempt('2025-07-15T10:26:00Z', 'failed', { code: 500 });
    await app.db('webhook_delivery_attempts').where({ event_id: eventId, outcome: 'delivered' }).delete();
    await afterBannerRead(() => page.click('#refresh'));
    expect(await page.locator('#failing-banner').isVisible()).toBe(true);
    await page.click('#logout');
    await page.locator('#login-view').waitFor();
    expect(await page.locator('#failing-banner').isHidden()).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});
