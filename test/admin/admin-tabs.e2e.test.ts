import type { Page, Response } from 'playwright-core';
import { describeInBrowser, type HeadlessBrowser, launchChromium, watchPage } from '../support/browser';
import { STAFF, startTestApp, type TestApp } from '../support/test-app';

/*
 * The admin page in two tabs of one session, in Chromium: the second tab is opened by the first (window.open), so
 * it starts with a copy of the first one's sessionStorage, as a duplicated tab does, and with that its session. Refresh tokens are rotated on
 * use and a rotated one presented again ends the whole session
 * (docs/api.md#sessions-one-sign-in-and-the-refresh-tokens-rotated-from-it). Before, each tab held its own copy of
 * the tokens: whichever refreshed second presented the token the other had rotated, and both were signed out. Now one tab refreshes at a time and every tab uses the newest tokens, while a real reuse still ends
 * the session.
 */

const ACCESS_TOKEN_EXPIRED = 6 * 60;

describeInBrowser('the admin page in two tabs of one session (headless Chromium)', () => {
  let app: TestApp;
  let browser: HeadlessBrowser;
  // The first tab, and the one it opened.
  let first: Page, second: Page;
  /** The refresh tokens the tabs exchanged, in order. */
  const refreshed: string[] = [];
  const pageErrors: string[] = [];

  beforeAll(async () => {
    app = await startTestApp();
    browser = await launchChromium();
    browser.context.on('request', (request) => {
      if (request.url().endsWith('/authentication/refresh')) refreshed.push(JSON.parse(request.postData() ?? '{}').refresh);
    });
    browser.context.on('page', (page) => {
      watchPage(page, pageErrors);
    });
    first = await browser.context.newPage();
    await first.goto(`${app.baseUrl}/admin/`);
    await signIn(first);
    second = await openedFrom(first);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  async function signIn(page: Page): Promise<void> {
    await page.locator('#login-view').waitFor();
    await page.fill('#login-form [name=username]', STAFF.username);
    await page.fill('#login-form [name=password]', STAFF.password);
    await page.click('#login-form button[type=submit]');
    await page.locator('#events-view').waitFor();
  }

  /** A tab opened by `page`: it starts in the same session, without signing in. */
  async function openedFrom(page: Page): Promise<Page> {
    const [opened] = await Promise.all([browser.context.waitForEvent('page'), page.evaluate("void window.open('/admin/#/events')")]);
    await opened.locator('#events-view').waitFor();
    return opened;
  }

  const endedSessions = () => app.db('ended_sessions').select('reason');
  /** How many sessions' tokens the browser keeps (the page's IndexedDB store, read from `page`). */
  const storedSessions = (page: Page) =>
    page.evaluate(`new Promise((resolve, reject) => {
      const open = indexedDB.open('webhook-admin');
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const keys = open.result.transaction('sessions').objectStore('sessions').getAllKeys();
        keys.onsuccess = () => { open.result.close(); resolve(keys.result.length); };
      };
    })`);

  /** *Aktualisieren*, and the list's answer (after a refresh of the tokens, if one was needed). */
  async function reloadList(page: Page): Promise<void> {
    await Promise.all([
      page.waitForResponse((response) => new URL(response.url()).pathname === '/admin/api/webhook-events' && response.status() === 200),
      page.click('#refresh'),
    ]);
  }

  test('both tabs go on past the access token lifetime: one refreshes at a time, and each then uses the newest tokens', async () => {
    app.clock.now += ACCESS_TOKEN_EXPIRED;
    await reloadList(first);
    expect(refreshed).toHaveLength(1);
    // The second tab's access token has expired as well; it takes the one the first tab got instead of refreshing.
    await reloadList(second);
    expect(refreshed).toHaveLength(1);

    // Both at once: the first refresh is held until the other tab's request has been refused too. One refresh, which
    // the other tab waits for and then uses.
    app.clock.now += ACCESS_TOKEN_EXPIRED;
    let refused = 0;
    let bothRefused = () => {};
    const both = new Promise<void>((resolve) => (bothRefused = resolve));
    const countRefusals = (response: Response) => {
      if (new URL(response.url()).pathname === '/admin/api/webhook-events' && response.status() === 401 && ++refused === 2) bothRefused();
    };
    browser.context.on('response', countRefusals);
    await browser.context.route('**/authentication/refresh', async (route) => {
      await both;
      await route.continue();
    });
    await Promise.all([reloadList(first), reloadList(second)]);
    await browser.context.unroute('**/authentication/refresh');
    browser.context.off('response', countRefusals);
    expect(refused).toBe(2);
    expect(refreshed).toHaveLength(2);
    expect(new Set(refreshed).size).toBe(2);
    expect(await endedSessions()).toEqual([]);

    // A reload of either tab stays signed in.
    await second.reload();
    await second.locator('#events-view').waitFor();
    expect(await first.isVisible('#events-view')).toBe(true);
  });

  test('a rotated refresh token used elsewhere (stolen) still ends the session, for both tabs', async () => {
    const stolen = refreshed[0];
    expect((await app.anonymous.request('POST', '/authentication/refresh', { refresh: stolen })).status).toBe(401);
    expect(await endedSessions()).toEqual([{ reason: 'refresh_token_reused' }]);

    // The tabs' access token still works until it expires; then their refresh is refused, and both sign in again.
    app.clock.now += ACCESS_TOKEN_EXPIRED;
    await first.click('#refresh');
    await first.locator('#login-error', { hasText: 'Die Sitzung ist abgelaufen.' }).waitFor();
    await second.click('#refresh');
    await second.locator('#login-view').waitFor();
    expect(await storedSessions(first)).toBe(0);
  });

  test('signing out in one tab signs out the others; a tab opened by itself signs in by itself; closed tabs leave no tokens behind', async () => {
    await signIn(first);
    const opened = await openedFrom(first);
    const alone = await browser.context.newPage();
    await alone.goto(`${app.baseUrl}/admin/`);
    await signIn(alone);
    expect(await storedSessions(alone)).toBe(2);

    await Promise.all([opened.waitForRequest((request) => request.url().endsWith('/authentication/logout')), opened.click('#logout')]);
    await opened.locator('#login-view').waitFor();
    await first.click('#refresh');
    await first.locator('#login-view').waitFor();
    expect(await storedSessions(alone)).toBe(1);
    expect(await alone.isVisible('#events-view')).toBe(true);

    // Closed without signing out: its tokens are deleted at the next sign-in in this browser.
    await alone.close();
    await signIn(first);
    expect(await storedSessions(first)).toBe(1);
    expect(pageErrors).toEqual([]);
  });
});
