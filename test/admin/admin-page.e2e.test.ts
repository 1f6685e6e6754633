import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page, Request } from 'playwright-core';
import { projectRoot } from '../../src/config';
import { createKeyring } from '../../src/secrets/keyring';
import { openEndpointSecrets } from '../../src/webhook-endpoint/endpoint-store';
import { describeInBrowser, type HeadlessBrowser, launchChromium, watchPage } from '../support/browser';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { NON_STAFF, STAFF, type TestApp } from '../support/test-app';
import { attemptRows, eventRow, insertEvent, workflowIdOf } from '../support/webhook-rows';
import { type DeliveryTestBed, startDeliveryTestBed } from '../support/delivery';

// The admin page in a real browser against the real app (real HTTP, Postgres, Temporal test server and delivery
// worker for the resend, a local subscriber). Screenshots go to test-results/ for people to look at.

const SCREENSHOTS = path.join(projectRoot, 'test-results');
const TEMPORAL_UI = 'http://127.0.0.1:8233';
const HOSTILE_BODY = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script> Server down';

describeInBrowser('admin page (headless Chromium)', () => {
  let bed: DeliveryTestBed;
  let app: TestApp;
  let subscriber: Subscriber;
  let browser: HeadlessBrowser;
  let page: Page;
  const requests: Request[] = [];
  const pageErrors: string[] = [];
  const ids = { exhausted: 0, failed: 0, waiting: 0, oldest: 0 };

  beforeAll(async () => {
    bed = await startDeliveryTestBed('admin-page', { env: { TEMPORAL_UI_URL: TEMPORAL_UI }, clientSkipsTime: true });
    app = bed.app;
    subscriber = await startSubscriber({ reply: () => ({ status: 200, body: 'danke' }) });
    await seed();

    browser = await launchChromium();
    page = await browser.context.newPage();
    page.on('request', (request) => requests.push(request));
    watchPage(page, pageErrors);
    await mkdir(SCREENSHOTS, { recursive: true });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await bed?.close();
    await subscriber?.close();
  });

  /** An endpoint, and 27 events of every status (newest last): a page and a bit of events. */
  async function seed() {
    expect((await app.request('PUT', '/admin/api/webhook-endpoint', { url: 'https://crm.example.org/hooks' })).status).toBe(200);
    const [{ id: endpointId }] = await app.db('webhook_endpoints').select('id');
    const at = (minute: number) => new Date(Date.UTC(2025, 6, 15, 8, minute));
    const add = async (eventType: string, minute: number, fields: Record<string, unknown>) => {
      const { id } = await insertEvent(app.db, endpointId, { eventType });
      await app.db('webhook_events').where({ id }).update({ created_at: at(minute), workflow_started_at: at(minute), ...fields });
      return id;
    };
    for (let minute = 0; minute < 24; minute++) {
      const id = await add('donation.completed', minute, { status: 'delivered', attempts: 1, last_response_code: 200, last_response_body: 'ok', delivered_at: at(minute) });
      if (minute === 0) ids.oldest = id;
    }
    ids.failed = await add('donation.recurring_completed', 30, {
      status: 'failed',
      attempts: 2,
      last_response_code: 503,
      last_response_body: 'Service Unavailable',
      next_attempt_at: new Date('2025-07-15T09:35:00Z'),
    });
    ids.waiting = await add('newsletter.subscribed', 31, {});
    ids.exhausted = await add('shop_order.completed', 32, { status: 'max_retries_reached', attempts: 5, last_response_code: 500, last_response_body: HOSTILE_BODY });
    await app.db('webhook_delivery_attempts').insert(
      [1, 2, 3, 4, 5].map((number) => ({
        event_id: ids.exhausted,
        number,
        started_at: at(32 + number),
        duration_ms: 40 + number,
        response_code: 500,
        response_body: number === 5 ? HOSTILE_BODY : 'Internal Server Error',
        outcome: 'failed',
      })),
    );
  }

  /** The endpoint row with its secrets opened, as a delivery sees it (they are stored encrypted). */
  async function storedEndpoint() {
    return openEndpointSecrets(await app.db('webhook_endpoints').first(), createKeyring(app.config.secrets.keys));
  }

  async function signIn(username: string, password: string) {
    await page.fill('#login-form [name=username]', username);
    await page.fill('#login-form [name=password]', password);
    await page.click('#login-form button[type=submit]');
  }

  const adminApiAuthorizations = () =>
    requests.filter((request) => new URL(request.url()).pathname.startsWith('/admin/api/')).map((request) => request.headers().authorization);

  test('only a staff account signs in; the page then calls the admin API with its credentials', async () => {
    const response = await page.goto(`${app.baseUrl}/admin`);
    expect(response?.headers()['x-frame-options']).toBe('DENY');
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    await page.locator('#login-view').waitFor();

    await signIn(STAFF.username, 'wrong-password');
    await page.locator('#login-error', { hasText: 'Benutzername oder Passwort ist falsch.' }).waitFor();
    await signIn(NON_STAFF.username, NON_STAFF.password);
    await page.locator('#login-error', { hasText: 'keine Staff-Berechtigung' }).waitFor();

    await signIn(STAFF.username, STAFF.password);
    await page.locator('#events-view').waitFor();
    expect(await page.textContent('#session-user')).toBe('staff');
    expect(page.url()).toBe(`${app.baseUrl}/admin/`);
    expect(adminApiAuthorizations().at(-1)).toMatch(/^Bearer /);
  });

  test('edits the endpoint; passwords and secrets are sent once and never shown', async () => {
    await page.click('#nav a[data-view=endpoint]');
    const form = page.locator('#endpoint-form');
    await form.waitFor();
    const save = async (status: number) => {
      const [response] = await Promise.all([
        page.waitForResponse((response) => response.request().method() === 'PUT'),
        form.locator('button[type=submit]').click(),
      ]);
      expect(response.status()).toBe(status);
    };
    expect(await form.locator('[name=url]').inputValue()).toBe('https://crm.example.org/hooks');
    expect(await page.textContent('#password-state')).toBe('nicht gesetzt');

    await form.locator('[name=url]').fill('ftp://crm.example.org/hooks');
    await save(400);
    await page.locator('#endpoint-error', { hasText: 'Nicht gespeichert: url: must use https' }).waitFor();

    await form.locator('[name=url]').fill(subscriber.url);
    await form.locator('[name=active]').uncheck();
    await form.locator('[name=payload_version]').selectOption('v2');
    await form.locator('[name=events][value="donation.reconciled"]').check();
    await form.locator('[name=events][value="shop_order.completed"]').uncheck();
    await form.locator('[name=basic_auth_username]').fill('crm');
    await form.locator('[name=basic_auth_password]').fill('crm-password-1');
    await page.click('#generate-secret');
    const secret = await form.locator('[name=signing_secret]').inputValue();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    await save(200);
    await page.locator('#flash', { hasText: 'Endpunkt gespeichert.' }).waitFor();

    expect(await storedEndpoint()).toMatchObject({
      url: subscriber.url,
      active: false,
      payload_version: 'v2',
      events: ['donation.completed', 'donation.recurring_completed', 'donation.reconciled'],
      basic_auth_username: 'crm',
      basic_auth_password: 'crm-password-1',
      signing_secret: secret,
    });
    expect(await page.textContent('#password-state')).toBe('gesetzt');
    expect(await page.textContent('#secret-state')).toBe('gesetzt');
    expect(await form.locator('[name=basic_auth_password]').inputValue()).toBe('');
    expect(await form.locator('[name=signing_secret]').inputValue()).toBe('');

    // Switched back on; the stored credentials are kept without being sent again.
    await form.locator('[name=active]').check();
    await save(200);
    const lastPut = requests.filter((request) => request.method() === 'PUT').at(-1);
    expect(JSON.parse(lastPut?.postData() ?? '{}')).not.toHaveProperty('basic_auth_password');
    expect(JSON.parse(lastPut?.postData() ?? '{}')).not.toHaveProperty('signing_secret');
    expect(await storedEndpoint()).toMatchObject({ active: true, basic_auth_password: 'crm-password-1', signing_secret: secret });

    const html = await page.content();
    expect(html).not.toContain('crm-password-1');
    expect(html).not.toContain(secret);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-page-endpoint.png'), fullPage: true });
  });

  test('lists the events with German status labels, filters them and pages through them', async () => {
    await page.click('#nav a[data-view=events]');
    const rows = page.locator('#events-table tbody tr');
    await page.locator('#events-count', { hasText: '27 Ereignisse' }).waitFor();
    expect(await rows.count()).toBe(20);
    expect(await page.textContent('#page-info')).toBe('Seite 1 von 2');
    expect(await rows.first().locator('td').allTextContents()).toEqual([
      `#${ids.exhausted}`,
      'shop_order.completed',
      '15.07.2025, 10:32',
      'Maximale Wiederholungen erreicht',
      '5',
      `500${HOSTILE_BODY.slice(0, 80)}…`,
      '–',
    ]);
    // Its delivery started two hours ago and made no attempt: stuck, beside its status.
    expect(await rows.nth(1).locator('.badge').allTextContents()).toEqual(['Wartend', 'Hängt fest']);
    expect(await rows.nth(2).locator('td').allTextContents()).toEqual([
      `#${ids.failed}`,
      'donation.recurring_completed',
      '15.07.2025, 10:30',
      // Its next attempt was due at 11:35, almost an hour before the page's 12:30: stuck as well.
      'FehlgeschlagenHängt fest',
      '2',
      '503Service Unavailable',
      '15.07.2025, 11:35',
    ]);
    expect(await rows.nth(3).locator('.badge').textContent()).toBe('Zugestellt');
    // The subscriber's body is text on the page: no element made from it, no script run.
    expect(await page.locator('#events-table img, #events-table script').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-page.png'), fullPage: true });

    await page.click('#page-next');
    await page.locator('#page-info', { hasText: 'Seite 2 von 2' }).waitFor();
    expect(await rows.count()).toBe(7);
    expect(await rows.last().locator('td').first().textContent()).toBe(`#${ids.oldest}`);
    expect(await page.isDisabled('#page-next')).toBe(true);

    await page.selectOption('#filters [name=status]', { label: 'Maximale Wiederholungen erreicht' });
    await page.locator('#events-count', { hasText: '1 Ereignis' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/events?status=max_retries_reached');
    expect(await rows.locator('td:first-child').allTextContents()).toEqual([`#${ids.exhausted}`]);

    await page.selectOption('#filters [name=status]', { label: 'Alle' });
    await page.selectOption('#filters [name=event]', 'donation.completed');
    await page.locator('#events-count', { hasText: '24 Ereignisse' }).waitFor();
    expect(new Set(await rows.locator('.badge').allTextContents())).toEqual(new Set(['Zugestellt']));
    await page.selectOption('#filters [name=status]', { label: 'Fehlgeschlagen' });
    await page.locator('#events-count', { hasText: '0 Ereignisse' }).waitFor();
    expect(await page.isVisible('#events-empty')).toBe(true);

    // Left filtered for the next steps; waiting for the row itself, as the step in between also shows "1 Ereignis".
    await page.selectOption('#filters [name=event]', { label: 'Alle' });
    await page.selectOption('#filters [name=status]', { label: 'Maximale Wiederholungen erreicht' });
    await rows.locator('td:first-child', { hasText: `#${ids.exhausted}` }).waitFor();
    expect(await rows.count()).toBe(1);
  });

  test('past the access token lifetime the page goes on without a new sign-in; a reload keeps the session', async () => {
    const refreshes = () => requests.filter((request) => request.url().endsWith('/authentication/refresh')).length;
    const before = refreshes();
    app.clock.now += 6 * 60;
    const [reloaded] = await Promise.all([
      page.waitForResponse((response) => new URL(response.url()).pathname === '/admin/api/webhook-events' && response.status() === 200),
      page.click('#refresh'),
    ]);
    expect(reloaded.ok()).toBe(true);
    // The expired access token was exchanged once.
    expect(refreshes() - before).toBe(1);

    await page.reload();
    await page.locator('#events-count', { hasText: '1 Ereignis' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/events?status=max_retries_reached');
  });

  test("shows an event's attempts, payload and last response as text, with a link to its workflow in the Temporal UI", async () => {
    // A run of attempt 2 whose worker was lost before its outcome was recorded.
    await app.db('webhook_attempt_starts').insert({ event_id: ids.exhausted, number: 2, manual: false, started_at: new Date('2025-07-15T08:33:30Z') });
    await page.click(`#events-table a[href="#/events/${ids.exhausted}"]`);
    const view = page.locator('#event-view');
    await view.locator('h1', { hasText: `Ereignis #${ids.exhausted}` }).waitFor();
    expect(await view.locator('.heading .badge').textContent()).toBe('Maximale Wiederholungen erreicht');
    expect(await page.textContent('#last-response')).toBe(HOSTILE_BODY);
    expect(await page.locator('#event-view img, #event-view script').count()).toBe(0);

    const attempts = page.locator('#attempts-table tbody tr');
    expect(await attempts.count()).toBe(6);
    expect(await attempts.first().locator('td').allTextContents()).toEqual(['1', 'geplant', '15.07.2025, 10:33:00', '41 ms', 'Fehlgeschlagen', '500', 'Internal Server Error']);
    expect(await attempts.nth(1).locator('td').allTextContents()).toEqual(['2', 'geplant', '15.07.2025, 10:33:30', '–', 'Unterbrochen – Ergebnis unbekannt', '–', '']);
    expect(await page.textContent('#event-view .facts')).toContain('Versuche5 (+1 unterbrochen)');

    const stored = await eventRow(app.db, ids.exhausted);
    expect(JSON.parse((await page.textContent('#payload')) ?? '')).toEqual(JSON.parse(stored.payload));

    const link = page.locator('#temporal-link');
    expect(await link.getAttribute('href')).toBe(`${TEMPORAL_UI}/namespaces/default/workflows/${stored.workflow_id}`);
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    expect(await page.isEnabled('#resend')).toBe(true);
  });

  test('resends the event: the subscriber gets the same bytes with the new credentials, and the page shows it delivered', async () => {
    await page.click('#resend');
    await page.locator('#flash', { hasText: `Workflow ${await workflowIdOf(app.db, ids.exhausted)}` }).waitFor();
    const [request] = await subscriber.waitForRequests(1);
    const stored = await eventRow(app.db, ids.exhausted);
    expect(request.body.toString('utf8')).toBe(stored.payload);
    expect(request.headers.authorization).toBe(`Basic ${Buffer.from('crm:crm-password-1').toString('base64')}`);
    expect(request.headers['webhook-signature']).toMatch(/^v1,/);

    const view = page.locator('#event-view');
    await view.locator('.heading .badge', { hasText: 'Zugestellt' }).waitFor();
    const attempts = page.locator('#attempts-table tbody tr');
    expect(await attempts.count()).toBe(7);
    expect(await attempts.last().locator('td').nth(1).textContent()).toBe('manuell');
    expect(await attempts.last().locator('td').nth(4).textContent()).toBe('Zugestellt');
    expect(await page.textContent('#last-response')).toBe('danke');
    expect(await page.isDisabled('#resend')).toBe(true);
    expect((await attemptRows(app.db, ids.exhausted)).at(-1)).toMatchObject({ number: 6, manual: true, outcome: 'delivered' });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-page-event.png'), fullPage: true });

    await page.click('a.back');
    await page.locator('#events-count', { hasText: '0 Ereignisse' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/events?status=max_retries_reached');
  });

  test('signs out; nothing went to another host and the page logged no error', async () => {
    const logouts = () => requests.filter((request) => request.url().endsWith('/authentication/logout')).length;
    const before = logouts();
    // With tokens the refresh token is blocked on the server as well (once the tokens are out of the store).
    await Promise.all([page.waitForRequest((request) => request.url().endsWith('/authentication/logout')), page.click('#logout')]);
    await page.locator('#login-view').waitFor();
    expect(await page.isVisible('#nav')).toBe(false);
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect(logouts() - before).toBe(1);
    for (const request of requests) expect(request.url().startsWith(`${app.baseUrl}/`)).toBe(true);
    expect(pageErrors).toEqual([]);
  });
});
