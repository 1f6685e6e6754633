import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import pino from 'pino';
import { createDb, type Db } from '../../src/db/knex';
import type { Logger } from '../../src/logger';
import { bundleDeliveryWorkflows, createTestWorker, startDelivery } from '../support/delivery';
import { createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import type { ReceivedRequest, Reply } from '../../src/demo/subscriber-server';
import { startTcpProxy } from '../support/tcp-proxy';
import { createTimeSkippingEnvironment } from '../support/temporal';
import { subscribersPerTest } from '../support/test-subscribers';
import { attemptRows, eventRow, insertEndpoint, insertEvent, TEST_KEYRING, workflowIdOf } from '../support/webhook-rows';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

let env: TestWorkflowEnvironment;
let workflowBundle: WorkflowBundle;
let db: Db;
let dbUrl: string;
const startSubscriber = subscribersPerTest();

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  workflowBundle = await bundleDeliveryWorkflows();
  ({ db, url: dbUrl } = await createTestDatabase());
});

afterAll(async () => {
  await db?.destroy();
  await env?.teardown();
});

interface WorkerOptions {
  activityDb?: Db;
  log?: Logger;
  timeoutMs?: number;
}

/** Runs `body` while a delivery worker polls a task queue of its own. */
async function withWorker<T>(body: (taskQueue: string) => Promise<T>, options: WorkerOptions = {}): Promise<T> {
  const taskQueue = `delivery-${randomUUID()}`;
  const worker = await createTestWorker({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
    db: options.activityDb ?? db,
    log: options.log ?? pino({ level: 'silent' }),
    http: options.timeoutMs ? { timeoutMs: options.timeoutMs } : {},
    keyring: TEST_KEYRING,
  });
  return worker.runUntil(body(taskQueue));
}

/** A subscriber that notes, on each request, the event row as it stood just before that attempt. */
async function subscriberFor(reply: (request: ReceivedRequest) => Reply | Promise<Reply>, options: { port?: number } = {}) {
  const stateBefore: Array<Record<string, unknown>> = [];
  const subscriber = await startSubscriber({
    port: options.port,
    now: () => env.currentTimeMs(),
    reply: async (request) => {
      const { id } = JSON.parse(request.body.toString('utf8')) as { id: number };
      stateBefore[request.index] = await eventRow(db, id);
      return reply(request);
    },
  });
  return { subscriber, stateBefore };
}

async function startAndFinish(taskQueue: string, eventId: number) {
  expect(await startDelivery(db, env.client, taskQueue, eventId)).toBe('started');
  return env.client.workflow.getHandle(await workflowIdOf(db, eventId)).result();
}

/** Workflow time between two requests: the scheduled delay, plus the real milliseconds the attempt itself took. */
function expectGap(earlier: ReceivedRequest, later: ReceivedRequest, delayMs: number) {
  expect(later.atMs - earlier.atMs).toBeGreaterThanOrEqual(delayMs);
  expect(later.atMs - earlier.atMs).toBeLessThan(delayMs + 5_000);
}

test('delivers on the first try and logs the attempt without credentials', async () => {
  const { subscriber, stateBefore } = await subscriberFor(() => ({ status: 200, body: 'thanks' }));
  const endpointId = await insertEndpoint(db, { url: subscriber.url, basicAuth: { username: 'crm', password: 's3cret-pw' } });
  const event = await insertEvent(db, endpointId);
  const lines: string[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });

  expect(await withWorker((taskQueue) => startAndFinish(taskQueue, event.id), { log })).toBe('delivered');

  expect(subscriber.requests).toHaveLength(1);
  expect(subscriber.requests[0].body.toString('utf8')).toBe(event.payload);
  expect(subscriber.requests[0].headers.authorization).toBe(`Basic ${Buffer.from('crm:s3cret-pw').toString('base64')}`);
  expect(stateBefore[0]).toMatchObject({ status: 'waiting', attempts: 0, last_response_code: null });
  expect(await eventRow(db, event.id)).toMatchObject({
    status: 'delivered',
    attempts: 1,
    last_response_code: 200,
    last_response_body: 'thanks',
    last_error: null,
    next_attempt_at: null,
  });
  expect((await eventRow(db, event.id)).delivered_at).toBeInstanceOf(Date);
  expect(await attemptRows(db, event.id)).toMatchObject([{ number: 1, manual: false, outcome: 'delivered', response_code: 200 }]);

  const attemptLogs = lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'webhook delivery attempt');
  expect(attemptLogs).toEqual([
    expect.objectContaining({ eventId: event.id, workflowId: event.workflowId, attempt: 1, outcome: 'delivered', responseCode: 200 }),
  ]);
  expect(lines.join('\n')).not.toContain('s3cret-pw');
  expect(lines.join('\n')).not.toContain(Buffer.from('crm:s3cret-pw').toString('base64'));

  // The attempt ran as a local activity inside the workflow task (no activity task of its own); a worker killed
  // mid-attempt is noticed by the 10 s workflow task timeout, not after the 2 min upper bound of an attempt.
  const history = (await env.client.workflow.getHandle(event.workflowId).fetchHistory()).events ?? [];
  expect(history.flatMap((historyEvent) => historyEvent.activityTaskScheduledEventAttributes ?? [])).toEqual([]);
  expect(history.flatMap((historyEvent) => historyEvent.markerRecordedEventAttributes?.markerName ?? [])).toEqual([
    'core_local_activity',
  ]);
  expect(Number(history[0].workflowExecutionStartedEventAttributes?.workflowTaskTimeout?.seconds)).toBe(10);
});

test('workflow history keeps each attempt’s outcome, never the subscriber’s answer, and no timer that only reads the clock', async () => {
  const { subscriber } = await subscriberFor((request) =>
    request.index === 0 ? { status: 500, body: 'Error for Anna Muster <anna.muster@example.org>' } : { status: 200, body: 'thanks, Anna Muster' },
  );
  const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));
  expect(await withWorker((taskQueue) => startAndFinish(taskQueue, event.id))).toBe('delivered');

  const history = (await env.client.workflow.getHandle(event.workflowId).fetchHistory()).events ?? [];
  const markers = history.flatMap((historyEvent) => historyEvent.markerRecordedEventAttributes ?? []);
  expect(markers).toHaveLength(2);
  expect(JSON.stringify(history, (_, value: unknown) => (value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : value))).not.toContain(
    'Anna Muster',
  );
  // The one timer is the backoff: 5 minutes from the outcome, less the moments it took to record it.
  const timers = history.flatMap((historyEvent) => historyEvent.timerStartedEventAttributes ?? []);
  const durationsMs = timers.map(({ startToFireTimeout: t }) => Number(t?.seconds) * 1000 + Number(t?.nanos) / 1e6);
  expect(durationsMs).toEqual([expect.any(Number)]);
  expect(durationsMs[0]).toBeGreaterThan(5 * MINUTE - 1_000);
  expect(durationsMs[0]).toBeLessThanOrEqual(5 * MINUTE);
  expect((await attemptRows(db, event.id)).map((row) => row.response_body)).toEqual([
    'Error for Anna Muster <anna.muster@example.org>',
    'thanks, Anna Muster',
  ]);
});

test('fails twice, then delivers on attempt 3, after exactly 5 and 15 minutes of workflow time', async () => {
  const answers: Reply[] = [
    { status: 500, body: 'boom' },
    { status: 503, body: 'later' },
    { status: 200, body: '{"received":true}' },
  ];
  const { subscriber, stateBefore } = await subscriberFor((request) => answers[request.index]);
  const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));

  expect(await withWorker((taskQueue) => startAndFinish(taskQueue, event.id))).toBe('delivered');

  const requests = subscriber.requests;
  expect(requests).toHaveLength(3);
  expectGap(requests[0], requests[1], 5 * MINUTE);
  expectGap(requests[1], requests[2], 15 * MINUTE);
  // Same envelope, byte for byte, on every retry.
  for (const request of requests) expect(request.body.toString('utf8')).toBe(event.payload);

  expect(stateBefore[0]).toMatchObject({ status: 'waiting', attempts: 0, next_attempt_at: null });
  expect(stateBefore[1]).toMatchObject({ status: 'failed', attempts: 1, last_response_code: 500, last_response_body: 'boom' });
  expect(stateBefore[2]).toMatchObject({ status: 'failed', attempts: 2, last_response_code: 503, last_response_body: 'later' });
  // The recorded next attempt time is the schedule's pause after the failed attempt's outcome, which is when the next
  // attempt came (expectGap above, in workflow time; the attempt rows are on the worker's clock, which time skipping
  // leaves behind).
  const rows = await attemptRows(db, event.id);
  [5 * MINUTE, 15 * MINUTE].forEach((delay, index) => {
    const outcomeAt = rows[index].started_at.getTime() + rows[index].duration_ms;
    expect((stateBefore[index + 1].next_attempt_at as Date).getTime() - outcomeAt).toBe(delay);
  });
  expect(await eventRow(db, event.id)).toMatchObject({
    status: 'delivered',
    attempts: 3,
    last_response_code: 200,
    last_response_body: '{"received":true}',
    next_attempt_at: null,
  });
  expect(await attemptRows(db, event.id)).toMatchObject([
    { number: 1, outcome: 'failed', response_code: 500, response_body: 'boom', manual: false },
    { number: 2, outcome: 'failed', response_code: 503, response_body: 'later', manual: false },
    { number: 3, outcome: 'delivered', response_code: 200, response_body: '{"received":true}', manual: false },
  ]);
});

test('five failures reach max retries reached after 5 min, 15 min, 1 h and 4 h, and no sixth request follows', async () => {
  const { subscriber, stateBefore } = await subscriberFor((request) => ({ status: 500, body: `failure ${request.index + 1}` }));
  const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));

  await withWorker(async (taskQueue) => {
    expect(await startAndFinish(taskQueue, event.id)).toBe('max_retries_reached');
    await env.sleep('2 days');
  });

  const requests = subscriber.requests;
  expect(requests).toHaveLength(5);
  [5 * MINUTE, 15 * MINUTE, HOUR, 4 * HOUR].forEach((delay, index) => expectGap(requests[index], requests[index + 1], delay));
  stateBefore.slice(1).forEach((state, index) =>
    expect(state).toMatchObject({ status: 'failed', attempts: index + 1, last_response_body: `failure ${index + 1}` }),
  );
  expect(await eventRow(db, event.id)).toMatchObject({
    status: 'max_retries_reached',
    attempts: 5,
    last_response_code: 500,
    last_response_body: 'failure 5',
    next_attempt_at: null,
    delivered_at: null,
  });
  expect((await attemptRows(db, event.id)).map((row) => [row.number, row.outcome, row.manual])).toEqual([
    [1, 'failed', false],
    [2, 'failed', false],
    [3, 'failed', false],
    [4, 'failed', false],
    [5, 'failed', false],
  ]);
});

test('a secret that cannot sign fails each attempt with its reason: the schedule and max retries apply, nothing hangs', async () => {
  const { subscriber } = await subscriberFor(() => ({ status: 200 }));
  // Stored before PUT refused it (base64 that decodes to an empty key): before, every attempt threw inside signing and
  // Temporal retried it forever, the event waiting with 0 attempts and no error anywhere.
  const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url, signingSecret: 'whsec_=================' }));
  const handle = env.client.workflow.getHandle(await workflowIdOf(db, event.id));

  // Temporal UI's current details say why, in the admin page's words (a query needs a worker).
  const { status, currentDetails } = await withWorker(async (taskQueue) => ({
    status: await startAndFinish(taskQueue, event.id),
    ...((await handle.query('__temporal_workflow_metadata')) as { currentDetails: string }),
  }));

  const reason = 'Not sent: the signing secret decodes to an empty key; set a new one (whsec_ and the base64 of 24 or more random bytes)';
  expect(status).toBe('max_retries_reached');
  expect(subscriber.requests).toHaveLength(0);
  expect(await eventRow(db, event.id)).toMatchObject({ status: 'max_retries_reached', attempts: 5, last_error: reason });
  expect((await attemptRows(db, event.id)).map((row) => [row.number, row.outcome, row.error])).toEqual(
    [1, 2, 3, 4, 5].map((number) => [number, 'failed', reason]),
  );
  expect(currentDetails).toMatch(/^Maximale Wiederholungen erreicht — Versuch 5 von 5 um \d\d:\d\d \(Not sent: the signing secret decodes to an empty key;/);
});

test('an answer after 31 s is a failure, one after 20 s a delivery (time limit scaled 1:30 to 1 s)', async () => {
  const answers: Reply[] = [
    { status: 200, body: 'slow', delayMs: 1_034 },
    { status: 200, body: 'in time', delayMs: 667 },
  ];
  const { subscriber } = await subscriberFor((request) => answers[request.index]);
  const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));

  expect(await withWorker((taskQueue) => startAndFinish(taskQueue, event.id), { timeoutMs: 1_000 })).toBe('delivered');

  expectGap(subscriber.requests[0], subscriber.requests[1], 5 * MINUTE);
  expect(await attemptRows(db, event.id)).toMatchObject([
    { number: 1, outcome: 'failed', response_code: null, response_body: null, error: 'No response within 1 s' },
    { number: 2, outcome: 'delivered', response_code: 200, response_body: 'in time' },
  ]);
});

test('a refused connection fails the attempt; the subscriber back on its port gets the retry', async () => {
  const port = await freePort();
  const event = await insertEvent(db, await insertEndpoint(db, { url: `http://127.0.0.1:${port}/webhooks` }));

  const status = await withWorker(async (taskQueue) => {
    await startDelivery(db, env.client, taskQueue, event.id);
    const failed = await eventually(async () => {
      const row = await eventRow(db, event.id);
      return row.status === 'failed' && row;
    }, { what: 'the first attempt to be recorded' });
    expect(failed).toMatchObject({ attempts: 1, last_response_code: null, last_response_body: null });
    expect(failed.last_error).toMatch(/ECONNREFUSED/);
    await subscriberFor(() => ({ status: 202, body: 'accepted' }), { port });
    return env.client.workflow.getHandle(event.workflowId).result();
  });

  expect(status).toBe('delivered');
  expect(await attemptRows(db, event.id)).toMatchObject([
    { number: 1, outcome: 'failed', response_code: null },
    { number: 2, outcome: 'delivered', response_code: 202, response_body: 'accepted' },
  ]);
});

test('events are independent: a reconciliation is delivered while its originating event is in backoff', async () => {
  const { subscriber } = await subscriberFor((request) => {
    const { event } = JSON.parse(request.body.toString('utf8')) as { event: string };
    const completedAttempts = subscriber.requests.filter((r) => r.body.includes('"event":"donation.completed"')).length;
    return event === 'donation.completed' && completedAttempts === 1 ? { status: 503, body: 'busy' } : { status: 200 };
  });
  const endpointId = await insertEndpoint(db, { url: subscriber.url });
  const completed = await insertEvent(db, endpointId, { eventType: 'donation.completed', transactionId: 'tx-42' });
  const reconciled = await insertEvent(db, endpointId, { eventType: 'donation.reconciled', transactionId: 'tx-42' });

  const statuses = await withWorker(async (taskQueue) => {
    await startDelivery(db, env.client, taskQueue, completed.id);
    await startDelivery(db, env.client, taskQueue, reconciled.id);
    // One result awaited at a time: time skipping is global to the test server.
    const reconciledStatus = await env.client.workflow.getHandle(reconciled.workflowId).result();
    const completedStatus = await env.client.workflow.getHandle(completed.workflowId).result();
    return [completedStatus, reconciledStatus];
  });

  expect(statuses).toEqual(['delivered', 'delivered']);
  const byEvent = (id: number) => subscriber.requests.filter((r) => JSON.parse(r.body.toString('utf8')).id === id);
  const [completedFirst, completedRetry] = byEvent(completed.id);
  const [reconciledOnly] = byEvent(reconciled.id);
  expect(byEvent(reconciled.id)).toHaveLength(1);
  expect(reconciledOnly.atMs).toBeLessThan(completedRetry.atMs);
  expectGap(completedFirst, completedRetry, 5 * MINUTE);
  expect((await eventRow(db, completed.id)).attempts).toBe(2);
  expect((await eventRow(db, reconciled.id)).attempts).toBe(1);
});

test('database outages are retried by Temporal and never consume an attempt, nor re-send one', async () => {
  const postgres = new URL(dbUrl);
  const proxy = await startTcpProxy({ host: postgres.hostname, port: Number(postgres.port) });
  const proxiedUrl = new URL(dbUrl);
  proxiedUrl.port = String(proxy.port);
  const activityDb = createDb({ connectionString: proxiedUrl.toString() });
  const { subscriber } = await subscriberFor(async (request) => {
    if (request.index > 0) return { status: 200 };
    // Down right after the subscriber answered: the outcome is kept and recorded later, never sent again.
    await proxy.cut();
    return { status: 500, body: 'nope' };
  });
  const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));
  const handle = env.client.workflow.getHandle(event.workflowId);
  // Each try of the attempt's activity opens a database connection, which the proxy drops while the database is down.
  const retriedThrice = () => {
    const before = proxy.droppedConnections();
    return eventually(async () => proxy.droppedConnections() >= before + 3, { what: 'three tries while the database is down' });
  };

  try {
    const status = await withWorker(
      async (taskQueue) => {
        // Down before the first attempt: the event cannot be read, so nothing is sent.
        await proxy.cut();
        await startDelivery(db, env.client, taskQueue, event.id);
        await retriedThrice();
        expect(subscriber.requests).toHaveLength(0);
        await proxy.restore();

        await subscriber.waitForRequests(1);
        await retriedThrice();
        await proxy.restore();
        return handle.result();
      },
      { activityDb },
    );

    expect(status).toBe('delivered');
    expect(subscriber.requests).toHaveLength(2);
    expectGap(subscriber.requests[0], subscriber.requests[1], 5 * MINUTE);
    expect(await attemptRows(db, event.id)).toMatchObject([
      // Recorded from workflow history once Postgres was back: the outcome and code, not the body (never in history).
      { number: 1, outcome: 'failed', response_code: 500, response_body: null },
      { number: 2, outcome: 'delivered', response_code: 200 },
    ]);
    expect((await eventRow(db, event.id)).attempts).toBe(2);
  } finally {
    await activityDb.destroy();
    await proxy.close();
  }
});

test('a worker keeps 100 attempts open at once: slow subscribers do not queue behind each other', async () => {
  // Attempts run inside their workflow tasks, so the worker's workflow task slots bound how many POSTs wait at once.
  const events = 60;
  let open = 0;
  let mostOpen = 0;
  let releaseAll!: () => void;
  const allOpen = new Promise<void>((resolve) => (releaseAll = resolve));
  const { subscriber } = await subscriberFor(async () => {
    open += 1;
    mostOpen = Math.max(mostOpen, open);
    if (open === events) releaseAll();
    // Held until every attempt is open at once; a worker that cannot open them all answers them after 15 s (a loaded
    // machine took more than 3 s to open 60 that could all be open).
    await Promise.race([allOpen, new Promise((resolve) => setTimeout(resolve, 15_000).unref())]);
    open -= 1;
    return { status: 200 };
  });
  const endpoint = await insertEndpoint(db, { url: subscriber.url });
  const eventIds: number[] = [];
  for (let i = 0; i < events; i += 1) eventIds.push((await insertEvent(db, endpoint)).id);

  // Watched in Postgres rather than through the workflows' results: waiting for results lets the test server skip
  // time, and under this load it skips past the workflow task timeout while the attempts are still open.
  await withWorker(
    async (taskQueue) => {
      for (const eventId of eventIds) await startDelivery(db, env.client, taskQueue, eventId);
      await eventually(async () => (await db('webhook_events').whereIn('id', eventIds).where({ status: 'delivered' })).length === events, {
        what: 'every event delivered',
      });
    },
    { timeoutMs: 40_000 },
  );
  expect(mostOpen).toBe(events);
  expect(subscriber.requests).toHaveLength(events);
});
