import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { type ReceivedRequest, startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { RECOVERY_CONCURRENCY, recoveryWorkflowId } from '../../src/delivery-rules/recovery';
import { recoveryProgressQuery } from '../../workflows';
import { type DeliveryTestBed, startDelivery, startDeliveryTestBed } from '../support/delivery';
import { documentedResponses } from '../support/documented-responses';
import { eventually } from '../support/eventually';
import { startTestApp, type TestApp } from '../support/test-app';
import { attemptRows, eventRow, insertEvent, workflowIdOf } from '../support/webhook-rows';

// Bulk recovery through the admin API, the recovery workflow and each event's own delivery workflow, on the
// time-skipping server with a real subscriber. The app's client does not skip time: backoffs stay where they are.

let bed: DeliveryTestBed;
let client: Client;
let app: TestApp;
let subscriber: Subscriber;
let endpointId: number;
/** The status each event's next request gets (by envelope id); 200 for any other. */
const replies = new Map<number, number>();
let inFlight = 0;
let mostInFlight = 0;
/** While set, requests are held until this many are in flight at once (and then all answered). */
let gate: { size: number; opened: Promise<void>; open: () => void } | undefined;

beforeAll(async () => {
  bed = await startDeliveryTestBed('recovery');
  ({ client, app } = bed);
  subscriber = await startSubscriber({
    reply: async (request: ReceivedRequest) => {
      inFlight += 1;
      mostInFlight = Math.max(mostInFlight, inFlight);
      if (gate && inFlight >= gate.size) gate.open();
      await gate?.opened;
      const id = (JSON.parse(request.body.toString('utf8')) as { id: number }).id;
      return { status: replies.get(id) ?? 200, body: 'ok', afterAnswer: () => (inFlight -= 1) };
    },
  });
  expect((await app.request('PUT', '/admin/api/webhook-endpoint', { url: subscriber.url })).status).toBe(200);
  [{ id: endpointId }] = await app.db('webhook_endpoints').select('id');
}, 60_000);

afterAll(async () => {
  await bed?.close();
  await subscriber?.close();
});

/** An event created at `createdAt`, in `status` after `attempts` failed attempts (none of them a real workflow). */
async function failedEvent(createdAt: string, { status = 'max_retries_reached', attempts = 5, eventType = 'donation.completed' } = {}) {
  const { id } = await insertEvent(app.db, endpointId, { eventType });
  await app.db('webhook_events')
    .where({ id })
    .update({ created_at: new Date(createdAt), workflow_started_at: new Date(createdAt), status, attempts, last_response_code: 503 });
  await app.db('webhook_delivery_attempts').insert(
    Array.from({ length: attempts }, (_, index) => ({
      event_id: id,
      number: index + 1,
      started_at: new Date(createdAt),
      duration_ms: 5,
      response_code: 503,
      outcome: 'failed',
    })),
  );
  return id;
}

const requestsFor = (eventId: number) =>
  subscriber.requests.filter((request) => (JSON.parse(request.body.toString('utf8')) as { id: number }).id === eventId);

const finished = (id: string) =>
  eventually(
    async () => {
      const response = await app.request('GET', `/admin/api/recoveries/${id}`);
      return response.body.status === 'completed' && response.body.progress && response;
    },
    { what: `recovery ${id} to complete` },
  );

describe('one recovery', () => {
  const ids: Record<string, number> = {};
  const range = { created_from: '2025-07-15T08:00:00Z', created_to: '2025-07-15T12:00:00Z' };

  beforeAll(async () => {
    ids.exhausted = await failedEvent('2025-07-15T09:00:00Z');
    ids.otherType = await failedEvent('2025-07-15T09:05:00Z', { eventType: 'shop_order.completed' });
    ids.before = await failedEvent('2025-07-15T07:59:59Z');
    ids.atEnd = await failedEvent('2025-07-15T12:00:00Z');
    ids.delivered = await failedEvent('2025-07-15T09:10:00Z', { status: 'delivered', attempts: 1 });
    ids.test = await failedEvent('2025-07-15T09:15:00Z');
    await app.db('webhook_events').where({ id: ids.test }).update({ test: true });
    ids.dropped = await failedEvent('2025-07-15T09:20:00Z');
    await app.db('webhook_events').where({ id: ids.dropped }).update({ payload: '', payload_dropped_at: new Date() });
    // An event in backoff: its delivery workflow runs, waiting 5 minutes for attempt 2.
    ids.inBackoff = (await insertEvent(app.db, endpointId)).id;
    replies.set(ids.inBackoff, 500);
    await startDelivery(app.db, client, app.config.temporal.taskQueue, ids.inBackoff);
    await eventually(async () => (await eventRow(app.db, ids.inBackoff)).status === 'failed', { what: 'the first attempt to fail' });
    replies.delete(ids.inBackoff);
    await app.db('webhook_events').where({ id: ids.inBackoff }).update({ created_at: new Date('2025-07-15T09:30:00Z') });
  });

  test('the preview counts what would be resent: failed or at max retries, in the range, of the types; never a test event or a dropped payload', async () => {
    expect(await app.request('POST', '/admin/api/recoveries/preview', range)).toEqual({
      status: 200,
      body: { count: 3, by_status: { failed: 1, max_retries_reached: 2 } },
    });
    expect((await app.request('POST', '/admin/api/recoveries/preview', { ...range, events: ['donation.completed'] })).body).toEqual({
      count: 2,
      by_status: { failed: 1, max_retries_reached: 1 },
    });
    expect((await app.request('POST', '/admin/api/recoveries/preview', { ...range, events: ['newsletter.subscribed'] })).body.count).toBe(0);
  });

  test('resends each through its own delivery workflow, as a manual attempt, and reports the outcome', async () => {
    const key = randomUUID();
    const started = await app.request('POST', '/admin/api/recoveries', { ...range, events: ['donation.completed'], idempotency_key: key });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({
      id: key,
      workflow_id: `webhook-recovery-${key}`,
      status: 'running',
      created_from: '2025-07-15T08:00:00Z',
      created_to: '2025-07-15T12:00:00Z',
      events: ['donation.completed'],
      requested_by: 'staff',
    });
    const done = await finished(key);
    expect(done.body.progress).toEqual({ total: 2, processed: 2, delivered: 2, failed: 0, skipped: 0, unconfirmed: 0, done: true });
    const documented = await documentedResponses(app.baseUrl);
    expect(documented.errors('get', '/admin/api/recoveries/{id}', 200, done.body)).toEqual([]);
    expect(documented.errors('post', '/admin/api/recoveries', 202, started.body)).toEqual([]);

    // Each got one request, recorded as a manual attempt numbered by its delivery workflow.
    expect(requestsFor(ids.exhausted)).toHaveLength(1);
    expect((await attemptRows(app.db, ids.exhausted)).at(-1)).toMatchObject({ number: 6, manual: true, outcome: 'delivered' });
    expect(await eventRow(app.db, ids.exhausted)).toMatchObject({ status: 'delivered', attempts: 6 });
    // The event in backoff was answered by its running delivery workflow, which then ended delivered.
    expect(requestsFor(ids.inBackoff)).toHaveLength(2);
    expect((await attemptRows(app.db, ids.inBackoff)).map(({ number, manual }) => ({ number, manual }))).toEqual([
      { number: 1, manual: false },
      { number: 2, manual: true },
    ]);
    expect(await client.workflow.getHandle(await workflowIdOf(app.db, ids.inBackoff)).result()).toBe('delivered');
    for (const untouched of ['otherType', 'before', 'atEnd', 'delivered', 'test', 'dropped']) {
      expect([untouched, requestsFor(ids[untouched])]).toEqual([untouched, []]);
    }

    // Temporal UI: what it is, who asked, and where it stands.
    const handle = client.workflow.getHandle(recoveryWorkflowId(key));
    const description = await handle.describe();
    expect(await description.staticSummary()).toBe(
      'Recovery: resend failed events created 15.07.2025, 10:00 – 15.07.2025, 14:00 (Zurich), donation.completed',
    );
    expect(await description.staticDetails()).toContain('**Requested by:** staff');
    expect(await handle.query(recoveryProgressQuery)).toMatchObject({ total: 2, delivered: 2, done: true });
    const metadata = (await handle.query('__temporal_workflow_metadata')) as { currentDetails: string };
    expect(metadata.currentDetails).toBe('Fertig — 2 von 2 bearbeitet: 2 zugestellt, 0 erneut fehlgeschlagen, 0 übersprungen, 0 ohne Antwort');
  });

  test('the same request again does nothing twice; the same key with other parameters is refused', async () => {
    const key = randomUUID();
    const request = { ...range, events: ['shop_order.completed'], idempotency_key: key };
    replies.set(ids.otherType, 503);
    expect((await app.request('POST', '/admin/api/recoveries', request)).status).toBe(202);
    expect((await finished(key)).body.progress).toMatchObject({ total: 1, delivered: 0, failed: 1 });
    expect(requestsFor(ids.otherType)).toHaveLength(1);
    // Still failed: a new recovery would resend it, the same request does not.
    const again = await app.request('POST', '/admin/api/recoveries', { ...request, created_from: '2025-07-15T10:00:00+02:00' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: key, status: 'completed', progress: { total: 1, failed: 1, done: true } });
    expect(requestsFor(ids.otherType)).toHaveLength(1);

    const conflict = await app.request('POST', '/admin/api/recoveries', { ...request, created_to: '2025-07-15T13:00:00Z' });
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ code: 'idempotency_key_reused' });
    expect((await app.request('GET', `/admin/api/recoveries/${randomUUID()}`)).body).toMatchObject({ code: 'recovery_not_found' });
  });
});

test(`30 identical requests at once start one recovery, which resends ${RECOVERY_CONCURRENCY} events at a time, each once`, async () => {
  const day = '2025-07-20T';
  const events = await Promise.all(Array.from({ length: 35 }, (_, index) => failedEvent(`${day}10:${String(index).padStart(2, '0')}:00Z`)));
  const before = subscriber.requests.length;
  mostInFlight = 0;
  // The first requests are held until as many as the recovery may send at once have arrived: had it sent more, or
  // fewer, the count in flight would show it.
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  gate = { size: RECOVERY_CONCURRENCY, opened, open };
  const request = { created_from: `${day}00:00:00Z`, created_to: `${day}23:00:00Z`, idempotency_key: randomUUID() };
  const answers = await Promise.all(Array.from({ length: 30 }, () => app.request('POST', '/admin/api/recoveries', request)));
  expect(answers.filter((answer) => answer.status === 202)).toHaveLength(1);
  expect(answers.filter((answer) => answer.status === 200)).toHaveLength(29);
  expect(new Set(answers.map((answer) => answer.body.workflow_id))).toEqual(new Set([recoveryWorkflowId(request.idempotency_key)]));

  expect((await finished(request.idempotency_key)).body.progress).toMatchObject({ total: 35, delivered: 35, done: true });
  expect(subscriber.requests.length - before).toBe(35);
  for (const id of events) expect(requestsFor(id)).toHaveLength(1);
  expect(mostInFlight).toBe(RECOVERY_CONCURRENCY);
  gate = undefined;
});

describe('bad requests', () => {
  const valid = { created_from: '2025-07-15T08:00:00Z', created_to: '2025-07-15T12:00:00Z', idempotency_key: 'key-of-the-test' };

  test.each([
    ['no created_from', { ...valid, created_from: undefined }, 'created_from'],
    ['a date without time', { ...valid, created_from: '2025-07-15' }, 'created_from'],
    ['a time without offset', { ...valid, created_to: '2025-07-15T12:00:00' }, 'created_to'],
    ['the range the wrong way round', { ...valid, created_to: '2025-07-15T07:00:00Z' }, 'created_to'],
    ['an unknown event type', { ...valid, events: ['donation.refunded'] }, 'events.0'],
    ['events not a list', { ...valid, events: 'donation.completed' }, 'events'],
    ['a short key', { ...valid, idempotency_key: 'short' }, 'idempotency_key'],
    ['a key with other characters', { ...valid, idempotency_key: '../../etc/passwd' }, 'idempotency_key'],
    ['an unknown field', { ...valid, status: 'delivered' }, ''],
  ])('%s is a 400 naming the field', async (_, body, field) => {
    const response = await app.request('POST', '/admin/api/recoveries', body);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'invalid_body', problems: [expect.objectContaining({ in: 'body', name: field })] });
  });

  test('a malformed recovery id is a 400; staff only; without Temporal a 503, while the preview still answers', async () => {
    for (const id of ['short', 'a.b.c.d.e.f.g.h', '%2E%2E%2Fabcdefgh']) {
      expect((await app.request('GET', `/admin/api/recoveries/${id}`)).status).toBe(400);
    }
    expect((await app.request('POST', '/admin/api/recoveries', valid, {})).status).toBe(401);
    expect((await app.request('POST', '/admin/api/recoveries/preview', valid, app.nonStaff())).status).toBe(403);
    const withoutTemporal = await startTestApp();
    try {
      expect((await withoutTemporal.request('POST', '/admin/api/recoveries', valid)).body).toMatchObject({ code: 'delivery_unavailable' });
      expect((await withoutTemporal.request('GET', '/admin/api/recoveries/key-of-the-test')).status).toBe(503);
      const { idempotency_key: _, ...filter } = valid;
      expect((await withoutTemporal.request('POST', '/admin/api/recoveries/preview', filter)).body).toEqual({
        count: 0,
        by_status: { failed: 0, max_retries_reached: 0 },
      });
    } finally {
      await withoutTemporal.close();
    }
  });
});
