import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { projectRoot } from '../../src/config';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { createLogger } from '../../src/logger';
import { type OutboxRelay, startOutboxRelay } from '../../src/temporal/outbox-relay';
import { describeInBrowser, type HeadlessBrowser, launchChromium, watchPage } from '../support/browser';
import { eventually } from '../support/eventually';
import { STAFF, type TestApp } from '../support/test-app';
import { eventRow, insertEvent } from '../support/webhook-rows';
import { type DeliveryTestBed, startDeliveryTestBed } from '../support/delivery';

// The operators' views of the admin page in Chromium against the real app, Temporal test server, worker, outbox relay
// and a local subscriber: search, the health view's chart, bulk recovery, a test event, a dropped payload.
// Screenshots: test-results/admin-*.png. The app's clock stands at 2025-07-15T10:30:00Z (12:30 in Zurich).

const SCREENSHOTS = path.join(projectRoot, 'test-results');
const TEMPORAL_UI = 'http://127.0.0.1:8233';
const HOUR_MS = 60 * 60 * 1000;
const NOW = Date.parse('2025-07-15T10:30:00Z');

describeInBrowser('admin page for operators (headless Chromium)', () => {
  let bed: DeliveryTestBed;
  let app: TestApp;
  let relay: OutboxRelay;
  let subscriber: Subscriber;
  let browser: HeadlessBrowser;
  let page: Page;
  const pageErrors: string[] = [];
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    // No time skipping for the app and the relay: backoffs stay where they are.
    bed = await startDeliveryTestBed('admin-operators', { env: { TEMPORAL_UI_URL: TEMPORAL_UI } });
    const { client, taskQueue } = bed;
    app = bed.app;
    subscriber = await startSubscriber({ reply: () => ({ status: 200, body: 'danke' }) });
    await seed();
    relay = startOutboxRelay({ db: app.db, client, taskQueue, log: createLogger('silent'), pollIntervalMs: 200 });

    browser = await launchChromium();
    page = await browser.context.newPage();
    watchPage(page, pageErrors);
    await mkdir(SCREENSHOTS, { recursive: true });
    await page.goto(`${app.baseUrl}/admin/`);
    await page.fill('#login-form [name=username]', STAFF.username);
    await page.fill('#login-form [name=password]', STAFF.password);
    await page.click('#login-form button[type=submit]');
    await page.locator('#events-view').waitFor();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await relay?.stop();
    await bed?.close();
    await subscriber?.close();
  });

  /**
   * Events of a morning (each already handed to its workflow, so that the relay leaves them alone), three of them at
   * max retries reached after an outage of the subscriber; and the attempts of the last week for the health view.
   */
  async function seed() {
    expect((await app.request('PUT', '/admin/api/webhook-endpoint', { url: subscriber.url, payload_version: 'v2.1' })).status).toBe(200);
    const [{ id: endpointId }] = await app.db('webhook_endpoints').select('id');
    const add = async (name: string, createdAt: string, fields: Record<string, unknown>, transactionId = `pi_${name}`) => {
      const { id } = await insertEvent(app.db, endpointId, { transactionId });
      await app.db('webhook_events').where({ id }).update({ created_at: new Date(createdAt), workflow_started_at: new Date(createdAt), ...fields });
      ids[name] = id;
    };
    await add('early', '2025-07-15T05:10:00Z', { status: 'delivered', attempts: 1, last_response_code: 200 });
    for (const minute of [5, 20, 40]) {
      await add(`outage${minute}`, `2025-07-15T07:${String(minute).padStart(2, '0')}:00Z`, { status: 'max_retries_reached', attempts: 5, last_response_code: 503, last_response_body: 'down' });
    }
    await add('later', '2025-07-15T09:10:00Z', { status: 'delivered', attempts: 1, last_response_code: 200, donor_email: 'luca.bernasconi@example.ch' });
    await app.db('webhook_event_references').where({ event_id: ids.later }).update({ reference: '1000077' });
    await add('dropped', '2025-04-01T08:00:00Z', {
      status: 'delivered',
      attempts: 1,
      last_response_code: 200,
      payload: '',
      donor_email: null,
      payload_dropped_at: new Date('2025-05-01T01:15:00Z'),
    });

    // Attempts: a few every hour of the week, more in the day; failures during the outage this morning (07–09 UTC).
    const rows: Record<string, unknown>[] = [];
    let number = 0;
    for (let hoursAgo = 7 * 24 - 1; hoursAgo >= 0; hoursAgo--) {
      const hourStart = Math.floor(NOW / HOUR_MS) * HOUR_MS - hoursAgo * HOUR_MS;
      const utcHour = new Date(hourStart).getUTCHours();
      const count = 2 + ((utcHour * 7 + hoursAgo) % 5) + (utcHour >= 7 && utcHour <= 18 ? 4 : 0);
      const outage = hoursAgo <= 3 && hoursAgo >= 2;
      for (let index = 0; index < count; index++) {
        const startedAt = hourStart + (index * HOUR_MS) / (count + 1);
        if (startedAt > NOW) continue;
        const failed = outage || (index === 0 && hoursAgo % 11 === 0);
        rows.push({
          event_id: ids.early,
          number: ++number + 1,
          started_at: new Date(startedAt),
          duration_ms: failed && outage ? 30_000 : 40 + ((index * 37 + hoursAgo) % 160),
          response_code: failed ? 503 : 200,
          outcome: failed ? 'failed' : 'delivered',
        });
      }
    }
    for (let start = 0; start < rows.length; start += 500) await app.db('webhook_delivery_attempts').insert(rows.slice(start, start + 500));
  }

  /** Goes to a view through the navigation; what `selector` finds, once it shows. */
  async function openView(view: string, selector: string) {
    await page.click(`#nav a[data-view=${view}]`);
    const shown = page.locator(selector);
    await shown.waitFor();
    return shown;
  }

  const listedIds = async () => (await page.locator('#events-table tbody tr td:first-child').allTextContents()).map((text) => Number(text.slice(1)));

  test('finds events by transaction id, number and e-mail, and filters by created time in Swiss time; the address keeps the search', async () => {
    const search = page.locator('#search');
    await page.locator('#events-count', { hasText: '6 Ereignisse' }).waitFor();

    await search.locator('[name=term]').fill('pi_outage20');
    await search.locator('button[type=submit]').click();
    await page.locator('#events-count', { hasText: '1 Ereignis' }).waitFor();
    expect(await listedIds()).toEqual([ids.outage20]);
    expect(new URL(page.url()).hash).toBe('#/events?transaction_id=pi_outage20');

    // Each step waits for what it shows before the next is typed (a late render would fill the form again).
    await search.locator('[name=by]').selectOption('reference');
    await search.locator('[name=term]').fill('1000077');
    await search.locator('button[type=submit]').click();
    await page.locator('#events-table tbody tr td:first-child', { hasText: `#${ids.later}` }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/events?reference=1000077');
    expect(await listedIds()).toEqual([ids.later]);

    await search.locator('[name=by]').selectOption('email');
    await search.locator('[name=term]').fill('ANNA.Muster@example.ch');
    await search.locator('button[type=submit]').click();
    await page.locator('#events-count', { hasText: '4 Ereignisse' }).waitFor();
    expect(await listedIds()).toEqual([ids.outage40, ids.outage20, ids.outage5, ids.early]);

    // 09:00 to 10:00 in Zurich is 07:00 to 08:00 UTC: the outage's three events. Choosing a status applies what is
    // typed in the search form as well.
    await search.locator('[name=term]').fill('');
    await search.locator('[name=created_from]').fill('2025-07-15T09:00');
    await search.locator('[name=created_to]').fill('2025-07-15T10:00');
    await page.selectOption('#filters [name=status]', 'max_retries_reached');
    await page.locator('#events-count', { hasText: '3 Ereignisse' }).waitFor();
    expect(new URL(page.url()).hash).toBe(
      '#/events?status=max_retries_reached&created_from=2025-07-15T07%3A00%3A00Z&created_to=2025-07-15T08%3A00%3A00Z',
    );
    expect(await listedIds()).toEqual([ids.outage40, ids.outage20, ids.outage5]);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-search.png'), fullPage: true });

    // A reload shows the same search, filled in as typed (Swiss time).
    await page.reload();
    await page.locator('#events-count', { hasText: '3 Ereignisse' }).waitFor();
    expect(await search.locator('[name=created_from]').inputValue()).toBe('2025-07-15T09:00');
    expect(await page.inputValue('#filters [name=status]')).toBe('max_retries_reached');

    await page.click('#search-reset');
    await page.locator('#events-count', { hasText: '3 Ereignisse' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/events?status=max_retries_reached');
    await page.selectOption('#filters [name=status]', '');
    await page.locator('#events-count', { hasText: '6 Ereignisse' }).waitFor();
  });

  test('an event whose payload was dropped says when, and cannot be resent', async () => {
    await page.goto(`${app.baseUrl}/admin/#/events/${ids.dropped}`);
    await page.locator('#payload-dropped').waitFor();
    expect(await page.textContent('#payload-dropped')).toContain('nach Ablauf der Aufbewahrungsfrist gelöscht');
    expect(await page.locator('#payload').count()).toBe(0);
    expect(await page.isDisabled('#resend')).toBe(true);
    expect(await page.getAttribute('#resend', 'title')).toBe('Die Payload wurde nach Ablauf der Aufbewahrungsfrist gelöscht');
  });

  test('the health view draws the attempts per hour as SVG, with the success rate, median, p95 and last success', async () => {
    const chart = await openView('health', '#health-chart svg.chart');
    const health = (await app.request('GET', '/admin/api/delivery-health?window=24h')).body;
    expect(await chart.locator('g.bar').count()).toBe(24);
    // Every hour's bar is as tall as its share of the scale, failures stacked on the deliveries.
    const bars = await chart.locator('g.bar').evaluateAll((groups) =>
      groups.map((group) => ({
        title: group.querySelector('title')?.textContent,
        delivered: Number(group.querySelector('rect.delivered')?.getAttribute('height') ?? 0),
        failed: Number(group.querySelector('rect.failed')?.getAttribute('height') ?? 0),
      })),
    );
    const last = health.hours.at(-1);
    expect(bars.at(-1)?.title).toBe(`15.07., 12:00: ${last.delivered} zugestellt, ${last.failed} fehlgeschlagen`);
    const outageHour = bars.findIndex((bar) => bar.failed > 0 && bar.delivered === 0);
    expect(health.hours[outageHour]).toMatchObject({ delivered: 0, failed: expect.any(Number) });
    const unit = bars[0].delivered / health.hours[0].delivered;
    for (const [index, bar] of bars.entries()) {
      expect(bar.delivered).toBeCloseTo(health.hours[index].delivered * unit, 5);
      expect(bar.failed).toBeCloseTo(health.hours[index].failed * unit, 5);
    }
    expect(await chart.locator('text.axis').allTextContents()).toEqual(expect.arrayContaining(['15:00', '00:00', '12:00']));

    const stats = await page.locator('#health-stats dl').evaluateAll((tiles) =>
      tiles.map((tile) => [tile.querySelector('dt')?.textContent, tile.querySelector('dd')?.textContent]),
    );
    expect(stats).toEqual([
      ['Zustellversuche', `${health.attempts}${health.failed} fehlgeschlagen`],
      ['Erfolgsquote', `${(Math.round(health.success_rate * 1000) / 10).toFixed(1)}%`],
      ['Median Versuchsdauer', `${health.median_ms} ms`],
      // 30 s attempts of the outage: shown in seconds.
      ['95. Perzentil', `${(health.p95_ms / 1000).toFixed(1)} s`],
      [
        'Letzte erfolgreiche Zustellung',
        new Intl.DateTimeFormat('de-CH', { timeZone: 'Europe/Zurich', dateStyle: 'medium', timeStyle: 'short' }).format(new Date(health.last_success_at)),
      ],
    ]);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-health-24h.png'), fullPage: true });

    await page.click('#health-view .segmented a[data-window="7d"]');
    await page.waitForURL(/window=7d/);
    await page.locator('#health-chart svg.chart g.bar >> nth=167').waitFor();
    expect(await page.locator('#health-chart svg.chart g.bar').count()).toBe(168);
    // One label a day, at midnight in Zurich.
    expect(await page.locator('#health-chart svg.chart text.axis').allTextContents()).toEqual(
      expect.arrayContaining(['Mi., 09.07.', 'Di., 15.07.']),
    );
    expect(await page.getAttribute('#health-view .segmented a[data-window="7d"]', 'aria-current')).toBe('true');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-health-7d.png'), fullPage: true });
  });

  test('recovers the outage: a preview, then one recovery whose progress the page follows to the end', async () => {
    const form = await openView('recovery', '#recovery-form');
    await form.locator('[name=created_from]').fill('2025-07-15T09:00');
    await form.locator('[name=created_to]').fill('2025-07-15T10:00');
    await form.locator('[name=events][value="donation.completed"]').check();
    await page.click('#recovery-preview-button');
    await page.locator('#recovery-count', { hasText: '3 Ereignisse werden erneut gesendet' }).waitFor();
    expect(await page.textContent('#recovery-start')).toBe('3 Ereignisse erneut senden');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-recovery-preview.png'), fullPage: true });

    const before = subscriber.requests.length;
    // A double click starts one recovery: both clicks carry the preview's idempotency key.
    await page.dblclick('#recovery-start');
    await page.waitForURL(/#\/recovery\/[0-9a-f-]{36}$/);
    await page.locator('#recovery-status', { hasText: 'Abgeschlossen' }).waitFor();
    expect(await page.textContent('#recovery-summary')).toBe('3 von 3 bearbeitet');
    const counts = await page.locator('#recovery-counts dl').evaluateAll((tiles) =>
      tiles.map((tile) => [tile.querySelector('dt')?.textContent, tile.querySelector('dd')?.textContent]),
    );
    expect(counts).toEqual([
      ['Zugestellt', '3'],
      ['Erneut fehlgeschlagen', '0'],
      ['Übersprungen', '0'],
      ['Ohne Antwort (2 Min.)', '0'],
    ]);
    const key = new URL(page.url()).hash.split('/').at(-1);
    expect(await page.getAttribute('#recovery-temporal-link', 'href')).toBe(`${TEMPORAL_UI}/namespaces/default/workflows/webhook-recovery-${key}`);
    expect(subscriber.requests.length - before).toBe(3);
    for (const name of ['outage5', 'outage20', 'outage40']) expect(await eventRow(app.db, ids[name])).toMatchObject({ status: 'delivered', attempts: 6 });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-recovery.png'), fullPage: true });
  });

  test('sends a test event from the endpoint view; it arrives marked and shows in the list as a test', async () => {
    const form = await openView('endpoint', '#test-event-form');
    await form.locator('[name=event]').selectOption('shop_order.completed');
    const before = subscriber.requests.length;
    await page.click('#send-test-event');
    const link = page.locator('#test-event-link');
    await link.waitFor();
    await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-test-event.png'), fullPage: true });
    const [request] = (await subscriber.waitForRequests(before + 1)).slice(before);
    expect(request.headers['webhook-test']).toBe('1');
    expect(JSON.parse(request.body.toString('utf8'))).toMatchObject({ event: 'shop_order.completed', environment: 'test' });

    const id = Number((await link.getAttribute('href'))?.replace('#/events/', ''));
    expect(JSON.parse(request.body.toString('utf8')).id).toBe(id);
    await eventually(async () => (await eventRow(app.db, id)).status === 'delivered', { what: 'the test event delivered' });

    await link.click();
    const view = page.locator('#event-view');
    await view.locator('.heading .badge.test').waitFor();
    await view.locator('.heading .badge', { hasText: 'Zugestellt' }).waitFor();
    await page.click('#nav a[data-view=events]');
    const firstRow = page.locator('#events-table tbody tr').first();
    await firstRow.locator('.badge.test').waitFor();
    expect(await firstRow.locator('td').first().textContent()).toBe(`#${id}`);
    expect(pageErrors).toEqual([]);
  });

  test('a delivery that should have moved on and has not is marked stuck beside its status, and can be listed alone', async () => {
    const [{ id: endpointId }] = await app.db('webhook_endpoints').select('id');
    // In backoff, its next attempt due an hour ago (a worker that cannot reach Postgres, say): the workflow is
    // marked started, so the relay leaves it alone. Written in one transaction: the relay (polling every 200 ms)
    // would otherwise start and deliver the event between its insert and this update.
    const hourAgo = new Date(NOW - HOUR_MS);
    const id = await app.db.transaction(async (trx) => {
      const event = await insertEvent(trx, endpointId, { transactionId: 'pi_stuck' });
      await trx('webhook_events').where({ id: event.id }).update({ status: 'failed', attempts: 2, workflow_started_at: hourAgo, next_attempt_at: hourAgo });
      return event.id;
    });

    await page.click('#refresh');
    await page.locator('#events-table tbody tr .badge.stuck').first().waitFor();
    await page.check('#filters [name=stuck]');
    await page.locator('#events-count', { hasText: '1 Ereignis' }).waitFor();
    expect(new URL(page.url()).hash).toBe('#/events?stuck=true');
    expect(await listedIds()).toEqual([id]);
    const row = page.locator('#events-table tbody tr').first();
    expect(await row.locator('.badge').allTextContents()).toEqual(['Fehlgeschlagen', 'Hängt fest']);
    expect(await row.locator('.badge.stuck').getAttribute('title')).toContain('Seit mehr als 15 Minuten');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'admin-stuck.png'), fullPage: true });

    await row.click();
    await page.locator('#event-view .heading .badge.stuck').waitFor();
    await page.goBack();
    await page.uncheck('#filters [name=stuck]');
    await page.locator('#events-table tbody tr').nth(1).waitFor();
    expect(new URL(page.url()).hash).toBe('#/events');
    expect(pageErrors).toEqual([]);
  });
});
