import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import { Client } from '@temporalio/client';
import { startSubscriber, type ReceivedRequest, type Reply, type Subscriber } from '../../src/demo/subscriber-server';
import { createLogger } from '../../src/logger';
import { healLostDeliveries } from '../../src/temporal/delivery-sweep';
import { relayPendingEvents } from '../../src/temporal/outbox-relay';
import { purgeEndedEvents } from '../../workflows';
import { bundleDeliveryWorkflows, createTestWorker, type DeliveryTestBed, spawnWorkerProcess, startDelivery, startDeliveryTestBed } from '../support/delivery';
import { eventually } from '../support/eventually';
import { CURRENT_RELEASE, readHistories, writeHistory } from '../support/recorded-histories';
import { startTcpProxy } from '../support/tcp-proxy';
import { attemptRows, eventRow, insertEvent, workflowIdOf } from '../support/webhook-rows';

/*
 * `npm run histories:record`: runs today's workflows and activities through every path each workflow type can take,
 * on the time-skipping test server with the real app, a real subscriber and real worker processes, and writes each
 * history to test/temporal/histories/<version in package.json>/<workflow type>--<path>.json, as Temporal exports
 * histories. test/temporal/replay.test.ts replays them against later code. Run by Jest for its harness (Postgres,
 * the app); not part of `npm test` (the name does not end in .test.ts). Each recording checks that the run took the
 * path its name says before it is written.
 */

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

let bed: DeliveryTestBed;
/** Skips time while it waits for a result: backoffs pass at once. */
let skipping: Client;
let subscriber: Subscriber;
let endpointId: number;
const processes: ChildProcess[] = [];

/** What the subscriber answers each event's requests, in order (200 once the script runs out). */
const scripts = new Map<number, Array<Reply | (() => Promise<Reply>)>>();
const requestsOf = (eventId: number) => subscriber.requests.filter((request) => envelopeId(request) === eventId);
const envelopeId = (request: ReceivedRequest) => (JSON.parse(request.body.toString('utf8')) as { id: number }).id;

beforeAll(async () => {
  const recorded = readHistories(CURRENT_RELEASE);
  if (recorded.length > 0) {
    throw new Error(
      `test/temporal/histories/${CURRENT_RELEASE} holds ${recorded.length} histories already: they are what release ${CURRENT_RELEASE} ` +
        'ran, and a release records once. Raise the version in package.json for a new release (or delete the folder to record it again).',
    );
  }
  bed = await startDeliveryTestBed('histories');
  skipping = bed.env.client;
  subscriber = await startSubscriber({
    now: () => bed.env.currentTimeMs(),
    reply: async (request) => {
      const next = scripts.get(envelopeId(request))?.shift() ?? { status: 200, body: 'ok' };
      return typeof next === 'function' ? next() : next;
    },
  });
  const configured = await bed.app.request('PUT', '/admin/api/webhook-endpoint', {
    url: subscriber.url,
    basic_auth_username: 'crm',
    basic_auth_password: 'crm-password',
    signing_secret: `whsec_${Buffer.from('a signing secret of thirty-two bytes!').toString('base64')}`,
  });
  expect(configured.status).toBe(200);
  [{ id: endpointId }] = await bed.app.db('webhook_endpoints').select('id');
}, 120_000);

afterAll(async () => {
  for (const child of processes) child.kill('SIGKILL');
  await subscriber?.close();
  await bed?.close();
});

/** A new event whose requests get these answers (a function holds its request until it returns). */
async function eventAnswered(...answers: Array<Reply | (() => Promise<Reply>)>): Promise<number> {
  const { id } = await insertEvent(bed.app.db, endpointId);
  scripts.set(id, answers);
  return id;
}

const failure = (body = 'unavailable'): Reply => ({ status: 503, body });

/** A request held until `release()`; then answered `reply`. */
function held(reply: Reply) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  return { answer: async () => (await released, reply), release };
}

const startOnBed = (eventId: number) => startDelivery(bed.app.db, bed.client, bed.taskQueue, eventId);
const resultOf = async (eventId: number) => skipping.workflow.getHandle(await workflowIdOf(bed.app.db, eventId)).result();
const handleOf = async (eventId: number) => bed.client.workflow.getHandle(await workflowIdOf(bed.app.db, eventId));
const resend = (eventId: number) => bed.app.request('POST', `/admin/api/webhook-events/${eventId}/resend`);

const recorded = (eventId: number, status: string, attempts: number) =>
  eventually(
    async () => {
      const row = await eventRow(bed.app.db, eventId);
      return row.status === status && row.attempts === attempts && row;
    },
    { what: `event ${eventId} at ${status} after ${attempts} attempts`, timeoutMs: 60_000 },
  );

/** Writes the history of the workflow's latest run (or of `runId`), checking its type first. */
async function record(name: string, workflowId: string, workflowType: string, runId?: string): Promise<void> {
  const handle = bed.client.workflow.getHandle(workflowId, runId);
  const description = await handle.describe();
  expect([description.type, description.status.name]).toEqual([workflowType, 'COMPLETED']);
  writeHistory(CURRENT_RELEASE, `${workflowType}--${name}`, await handle.fetchHistory());
}

const manualFlags = async (eventId: number) => (await attemptRows(bed.app.db, eventId)).map((row) => [row.outcome, row.manual]);

/** The production `worker` role as a process of its own, on a task queue of its own. */
async function workerProcess(taskQueue: string, databaseUrl = bed.app.databaseUrl): Promise<ChildProcess> {
  const child = spawnWorkerProcess(bed, taskQueue, databaseUrl);
  processes.push(child);
  return child;
}

describe('deliverEvent', () => {
  test('delivered at the first attempt', async () => {
    const id = await eventAnswered({ status: 200, body: 'thanks' });
    await startOnBed(id);
    expect(await resultOf(id)).toBe('delivered');
    await record('delivered-first-attempt', await workflowIdOf(bed.app.db, id), 'deliverEvent');
  });

  test('failed twice, then delivered after 5 and 15 minutes', async () => {
    const id = await eventAnswered(failure(), { status: 500, body: 'boom' }, { status: 200 });
    await startOnBed(id);
    expect(await resultOf(id)).toBe('delivered');
    expect(await manualFlags(id)).toEqual([['failed', false], ['failed', false], ['delivered', false]]);
    await record('failed-then-delivered', await workflowIdOf(bed.app.db, id), 'deliverEvent');
  });

  test('five failures: max retries reached after 5 h 20 min', async () => {
    const id = await eventAnswered(failure(), failure(), failure(), failure(), failure());
    await startOnBed(id);
    expect(await resultOf(id)).toBe('max_retries_reached');
    expect(requestsOf(id)).toHaveLength(5);
    await record('max-retries-reached', await workflowIdOf(bed.app.db, id), 'deliverEvent');
  });

  test('a resend signalled while the delivery sleeps in backoff', async () => {
    const id = await eventAnswered(failure(), { status: 200, body: 'back' });
    await startOnBed(id);
    await recorded(id, 'failed', 1);
    expect((await resend(id)).status).toBe(202);
    expect(await resultOf(id)).toBe('delivered');
    expect(await manualFlags(id)).toEqual([['failed', false], ['delivered', true]]);
    await record('resend-during-backoff', await workflowIdOf(bed.app.db, id), 'deliverEvent');
  });

  test('a resend held while the first attempt is under way, answered right after it failed', async () => {
    const first = held(failure('first'));
    const id = await eventAnswered(first.answer, { status: 200, body: 'manual' });
    await startOnBed(id);
    await eventually(async () => requestsOf(id).length === 1, { what: 'the first request' });
    expect((await resend(id)).status).toBe(202);
    first.release();
    expect(await resultOf(id)).toBe('delivered');
    expect(await manualFlags(id)).toEqual([['failed', false], ['delivered', true]]);
    await record('resend-held-during-first-attempt', await workflowIdOf(bed.app.db, id), 'deliverEvent');
  });

  test('a resend that came while the fifth attempt ran (a slow subscriber), answered after max retries reached', async () => {
    const fifth = held(failure('fifth'));
    const id = await eventAnswered(failure(), failure(), failure(), failure(), fifth.answer, { status: 200 });
    await startOnBed(id);
    // Time moved by hand (not by waiting for the result), so that it never skips while the fifth request is held.
    for (const [attempts, pause] of [[1, 5 * MINUTE], [2, 15 * MINUTE], [3, HOUR], [4, 4 * HOUR]] as const) {
      await recorded(id, 'failed', attempts);
      await bed.env.sleep(pause);
    }
    await eventually(async () => requestsOf(id).length === 5, { what: 'the fifth request' });
    // A slow subscriber: the worker keeps the attempt's workflow task alive with a new one (after 8 s of the 10 s
    // timeout). A resend arriving after that comes in a task of its own, after attempt 5 began: not answered by it.
    const tasksDone = async () => (await (await handleOf(id)).fetchHistory()).events?.filter((event) => event.workflowTaskCompletedEventAttributes).length ?? 0;
    const before = await tasksDone();
    await eventually(async () => (await tasksDone()) > before, { what: 'the attempt’s workflow task to be kept alive', timeoutMs: 30_000 });
    expect((await resend(id)).status).toBe(202);
    fifth.release();
    expect(await resultOf(id)).toBe('delivered');
    expect((await manualFlags(id)).slice(4)).toEqual([['failed', false], ['delivered', true]]);
    await record('resend-during-last-attempt', await workflowIdOf(bed.app.db, id), 'deliverEvent');
  });

  test('a test event from the admin page, started by the outbox relay', async () => {
    const sent = await bed.app.request('POST', '/admin/api/webhook-endpoint/test-events', { event: 'donation.completed' });
    expect(sent.status).toBe(202);
    expect(await relayPendingEvents({ db: bed.app.db, client: bed.client, taskQueue: bed.taskQueue })).toBeGreaterThanOrEqual(1);
    expect(await resultOf(sent.body.id)).toBe('delivered');
    expect(requestsOf(sent.body.id)[0].headers['webhook-test']).toBe('1');
    await record('test-event', await workflowIdOf(bed.app.db, sent.body.id), 'deliverEvent');
  });

  test('the worker lost (kill -9) in the middle of an attempt: the attempt runs again on another worker', async () => {
    const taskQueue = `histories-lost-${randomUUID()}`;
    const first = held({ status: 200, body: 'too late' });
    const id = await eventAnswered(first.answer, { status: 200, body: 'thanks' });
    const lost = await workerProcess(taskQueue);
    await startDelivery(bed.app.db, bed.client, taskQueue, id);
    await eventually(async () => requestsOf(id).length === 1, { what: 'the first request, from the worker process', timeoutMs: 120_000 });
    lost.kill('SIGKILL');
    first.release();
    const worker = await createTestWorker({
      connection: bed.env.nativeConnection,
      taskQueue,
      workflowBundle: await bundleDeliveryWorkflows(),
      db: bed.app.db,
      keyring: bed.app.keyring,
    });
    expect(await worker.runUntil(resultOf(id))).toBe('delivered');
    expect(requestsOf(id)).toHaveLength(2);
    expect(await manualFlags(id)).toEqual([['delivered', false]]);
    const history = await bed.client.workflow.getHandle(await workflowIdOf(bed.app.db, id)).fetchHistory();
    expect(history.events?.some((event) => event.workflowTaskTimedOutEventAttributes)).toBe(true);
    await record('worker-lost-during-attempt', await workflowIdOf(bed.app.db, id), 'deliverEvent');
  });

  test('Postgres down right after the POST: the outcome waits in history and is recorded once it is back', async () => {
    const taskQueue = `histories-outage-${randomUUID()}`;
    const postgres = new URL(bed.app.databaseUrl);
    const proxy = await startTcpProxy({ host: postgres.hostname, port: Number(postgres.port) });
    const proxied = new URL(bed.app.databaseUrl);
    proxied.port = String(proxy.port);
    try {
      const id = await eventAnswered(
        async () => {
          await proxy.cut();
          return failure('down');
        },
        { status: 200 },
      );
      const worker = await workerProcess(taskQueue, proxied.toString());
      await startDelivery(bed.app.db, bed.client, taskQueue, id);
      await eventually(async () => requestsOf(id).length === 1, { what: 'the first request, from the worker process', timeoutMs: 120_000 });
      await eventually(async () => proxy.droppedConnections() >= 3, { what: 'three tries while Postgres is down' });
      await proxy.restore();
      expect(await resultOf(id)).toBe('delivered');
      worker.kill('SIGTERM');
      expect(await attemptRows(bed.app.db, id)).toMatchObject([{ outcome: 'failed', response_body: null }, { outcome: 'delivered' }]);
      await record('recorded-after-database-outage', await workflowIdOf(bed.app.db, id), 'deliverEvent');
    } finally {
      await proxy.close();
    }
  });
});

describe('resendEvent', () => {
  async function exhausted(...afterwards: Array<Reply | (() => Promise<Reply>)>) {
    const id = await eventAnswered(failure(), failure(), failure(), failure(), failure(), ...afterwards);
    await startOnBed(id);
    expect(await resultOf(id)).toBe('max_retries_reached');
    return id;
  }

  test('a resend after the delivery ended (max retries reached) delivers', async () => {
    const id = await exhausted({ status: 200, body: 'finally' });
    expect((await resend(id)).status).toBe(202);
    expect(await resultOf(id)).toBe('delivered');
    expect((await manualFlags(id)).at(-1)).toEqual(['delivered', true]);
    await record('after-max-retries', await workflowIdOf(bed.app.db, id), 'resendEvent');
  });

  test('the same resend requested twice at once: one attempt answers both', async () => {
    const sixth = held({ status: 410, body: 'gone' });
    const id = await exhausted(sixth.answer);
    const answers = await Promise.all([resend(id), resend(id)]);
    expect(answers.map((answer) => answer.status)).toEqual([202, 202]);
    sixth.release();
    expect(await resultOf(id)).toBe('max_retries_reached');
    expect(requestsOf(id)).toHaveLength(6);
    await record('same-request-twice', await workflowIdOf(bed.app.db, id), 'resendEvent');
  });
});

describe('recoverDeliveries', () => {
  test('a bulk recovery after its preview, and the same request again', async () => {
    const createdAt = new Date('2025-07-15T09:00:00Z');
    const exhausted = await eventAnswered({ status: 200 });
    await bed.app.db('webhook_events')
      .where({ id: exhausted })
      .update({ created_at: createdAt, workflow_started_at: createdAt, status: 'max_retries_reached', attempts: 5, last_response_code: 503 });
    await bed.app.db('webhook_delivery_attempts').insert(
      [1, 2, 3, 4, 5].map((number) => ({ event_id: exhausted, number, started_at: createdAt, duration_ms: 5, response_code: 503, outcome: 'failed' })),
    );
    const inBackoff = await eventAnswered(failure(), { status: 200 });
    await startOnBed(inBackoff);
    await recorded(inBackoff, 'failed', 1);
    await bed.app.db('webhook_events').where({ id: inBackoff }).update({ created_at: new Date('2025-07-15T09:30:00Z') });

    const range = { created_from: '2025-07-15T08:00:00Z', created_to: '2025-07-15T12:00:00Z' };
    expect((await bed.app.request('POST', '/admin/api/recoveries/preview', range)).body).toMatchObject({ count: 2 });
    const key = randomUUID();
    expect((await bed.app.request('POST', '/admin/api/recoveries', { ...range, idempotency_key: key })).status).toBe(202);
    const done = await eventually(
      async () => {
        const response = await bed.app.request('GET', `/admin/api/recoveries/${key}`);
        return response.body.status === 'completed' && response.body;
      },
      { what: 'the recovery to complete', timeoutMs: 60_000 },
    );
    expect(done.progress).toMatchObject({ total: 2, delivered: 2 });
    const again = await bed.app.request('POST', '/admin/api/recoveries', { ...range, idempotency_key: key });
    expect(again.status).toBeLessThan(300);
    await record('preview-run-and-repeat', done.workflow_id, 'recoverDeliveries');
  });
});

describe('purgeEndedEvents', () => {
  test('a retention run: deletes ended events past 90 days, then drops payloads past 30', async () => {
    const now = await bed.env.currentTimeMs();
    const aged = async (status: string, ageDays: number) => {
      const { id } = await insertEvent(bed.app.db, endpointId);
      const createdAt = new Date(now - ageDays * DAY);
      await bed.app.db('webhook_events').where({ id }).update({ status, attempts: 1, created_at: createdAt, workflow_started_at: createdAt });
      await bed.app.db('webhook_delivery_attempts').insert({ event_id: id, number: 1, started_at: createdAt, duration_ms: 5, response_code: 200, outcome: 'delivered' });
      return id;
    };
    const old = await aged('delivered', 100);
    const middle = await aged('max_retries_reached', 60);
    const workflowId = `webhook-retention-purge-${randomUUID()}`;
    const totals = await bed.client.workflow.execute(purgeEndedEvents, {
      taskQueue: bed.taskQueue,
      workflowId,
      args: [{ eventRetentionDays: 90, payloadRetentionDays: 30 }],
    });
    // Among the deleted: the events of the scenarios above that the app's clock dated to 2025.
    expect(totals.deletedEvents).toBeGreaterThanOrEqual(1);
    expect(totals.droppedPayloads).toBeGreaterThanOrEqual(1);
    expect(await eventRow(bed.app.db, old)).toBeUndefined();
    expect((await eventRow(bed.app.db, middle)).payload_dropped_at).toBeInstanceOf(Date);
    await record('deletes-then-drops-payloads', workflowId, 'purgeEndedEvents');
  });
});

describe('resumeDelivery', () => {
  test('a delivery in backoff whose workflow Temporal lost, healed by the sweep, delivered at its next attempt', async () => {
    const id = await eventAnswered(failure(), { status: 200 });
    await startOnBed(id);
    await recorded(id, 'failed', 1);
    const workflowId = await workflowIdOf(bed.app.db, id);
    // Temporal losing the workflow (its state restored from an older backup) as the sweep sees it: no run going on.
    await bed.client.workflow.getHandle(workflowId).terminate('histories:record: Temporal lost this delivery');
    const past = bed.app.db.raw("now() - interval '3 minutes'");
    await bed.app.db('webhook_events').where({ id }).update({ next_attempt_at: past, workflow_started_at: past });
    const healed = await healLostDeliveries({ db: bed.app.db, client: bed.client, taskQueue: bed.taskQueue, log: createLogger('silent') });
    expect(healed).toEqual({ checked: 1, healed: 1, conflicts: 0 });
    expect(await resultOf(id)).toBe('delivered');
    expect(await manualFlags(id)).toEqual([['failed', false], ['delivered', false]]);
    await record('healed-in-backoff', workflowId, 'resumeDelivery');
  });
});

test('every workflow type has its histories', () => {
  const types = new Set(readHistories(CURRENT_RELEASE).map((history) => history.workflowType));
  expect([...types].sort()).toEqual(['deliverEvent', 'purgeEndedEvents', 'recoverDeliveries', 'resendEvent', 'resumeDelivery']);
});

// The worker processes are started from TypeScript sources: they bundle the workflows themselves, which takes a while.
jest.setTimeout(180_000);
