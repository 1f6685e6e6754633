import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker, WorkflowBundle } from '@temporalio/worker';
import type { Db } from '../../src/db/knex';
import { createMetrics, type Metrics } from '../../src/observability/metrics';
import { RETENTION_BATCH_SIZE } from '../../src/delivery-rules/retention';
import { withEventHeldForResend } from '../../src/webhook-events/event-deliveries';
import { deleteEndedEvents } from '../../src/webhook-events/retention-batches';
import { deliverEvent, purgeEndedEvents } from '../../workflows';
import { createTestDatabase } from '../support/database';
import { createTimeSkippingEnvironment } from '../support/temporal';
import { PLATFORM_DONOR } from '../support/platform-donor';
import { memoOf } from '../../src/delivery-rules/event-identity';
import { attemptStartRows, eventRow, insertEndpoint, insertEvent, TEST_KEYRING, workflowIdOf } from '../support/webhook-rows';
import { bundleDeliveryWorkflows, createTestWorker } from '../support/delivery';

// The purge workflow on the time-skipping server (its schedule, which that server cannot run, is tested against the
// dev server in retention-schedule.test.ts). Workflow time is the server's: the cutoffs are counted from it.

const DAY_MS = 24 * 60 * 60 * 1000;

let env: TestWorkflowEnvironment;
/**
 * A client that does not skip time while it waits for a result: the test server would otherwise jump ahead once a
 * purge has ended (to its far-off timeouts), and the events' ages with it. Time moves only where a test says so.
 */
let client: Client;
let workflowBundle: WorkflowBundle;
let db: Db;
let endpointId: number;
let metrics: Metrics;
let worker: Worker;
let working: Promise<void>;
const taskQueue = `retention-${randomUUID()}`;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  client = new Client({ connection: env.connection });
  workflowBundle = await bundleDeliveryWorkflows();
  ({ db } = await createTestDatabase());
  endpointId = await insertEndpoint(db, { url: 'http://127.0.0.1:9/hooks' });
  metrics = createMetrics();
  worker = await createTestWorker({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle,
    db,
    metrics,
    keyring: TEST_KEYRING,
  });
  working = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await working;
  await db?.destroy();
  await env?.teardown();
});

/** Now as the workflows see it: the test server's clock (moved by time skipping). */
const serverNow = async () => (await env.currentTimeMs()) as number;

interface Aged {
  status: string;
  ageDays: number;
  attempts?: number;
}

/** An event of that status, created that many days before the server's now, with attempts that have response bodies. */
async function aged({ status, ageDays, attempts = 1 }: Aged): Promise<number> {
  const { id } = await insertEvent(db, endpointId);
  const createdAt = new Date((await serverNow()) - ageDays * DAY_MS);
  await db('webhook_events')
    .where({ id })
    .update({ status, attempts, created_at: createdAt, workflow_started_at: createdAt, last_response_code: 500, last_response_body: 'echo: anna@example.org' });
  for (let number = 1; number <= attempts; number++) {
    await db('webhook_delivery_attempts').insert({
      event_id: id,
      number,
      started_at: createdAt,
      duration_ms: 5,
      response_code: 500,
      response_body: 'echo: anna@example.org',
      outcome: 'failed',
    });
  }
  return id;
}

const purge = (eventRetentionDays: number, payloadRetentionDays = eventRetentionDays) =>
  client.workflow.execute(purgeEndedEvents, {
    taskQueue,
    workflowId: `purge-${randomUUID()}`,
    args: [{ eventRetentionDays, payloadRetentionDays }],
  });

const exists = async (id: number) => (await eventRow(db, id)) !== undefined;
const attemptCount = async (id: number) => Number((await db('webhook_delivery_attempts').where({ event_id: id }).count({ n: '*' }))[0].n);
const counter = async (name: string) => (await metrics.registry.getSingleMetric(name)!.get()).values[0]?.value ?? 0;

test('deletes ended events past the limit with their attempts; drops older payloads; never a waiting or failed event', async () => {
  const oldDelivered = await aged({ status: 'delivered', ageDays: 100, attempts: 2 });
  const oldExhausted = await aged({ status: 'max_retries_reached', ageDays: 91, attempts: 5 });
  const oldFailed = await aged({ status: 'failed', ageDays: 100, attempts: 3 });
  const oldWaiting = await aged({ status: 'waiting', ageDays: 100, attempts: 0 });
  const middle = await aged({ status: 'delivered', ageDays: 60 });
  const middleFailed = await aged({ status: 'failed', ageDays: 60 });
  const young = await aged({ status: 'delivered', ageDays: 10 });
  const before = (await eventRow(db, middle)) as Record<string, unknown>;
  expect(before).toMatchObject({ donor_email: PLATFORM_DONOR.email });
  const references = async (id: number) => (await db('webhook_event_references').where({ event_id: id })).map((row) => row.reference);
  expect(await references(middle)).toEqual(['100234']);
  expect(await references(oldDelivered)).toEqual(['100234']);
  // An interrupted run of its attempt 1 (its worker lost before the outcome was recorded).
  const interrupted = { number: 1, manual: false, started_at: new Date() };
  await db('webhook_attempt_starts').insert([oldDelivered, middle].map((event_id) => ({ event_id, ...interrupted })));

  const totals = await purge(90, 30);
  expect(totals).toEqual({ deletedEvents: 2, deletedAttempts: 7, droppedPayloads: 1, passedOver: 0 });

  expect(await exists(oldDelivered)).toBe(false);
  expect(await exists(oldExhausted)).toBe(false);
  expect(await attemptCount(oldDelivered)).toBe(0);
  expect(await attemptCount(oldExhausted)).toBe(0);
  for (const kept of [oldFailed, oldWaiting, middleFailed, young]) expect(await eventRow(db, kept)).toMatchObject({ payload_dropped_at: null });
  expect(await attemptCount(oldFailed)).toBe(3);
  expect((await eventRow(db, young)).last_response_body).toBe('echo: anna@example.org');

  // The payload and everything that may repeat it is gone; status, codes and the ids it is found by stay.
  const dropped = await eventRow(db, middle);
  expect(dropped).toMatchObject({
    status: 'delivered',
    payload: '',
    last_response_body: null,
    last_response_code: 500,
    donor_email: null,
    transaction_id: before.transaction_id,
    payload_dropped_at: expect.any(Date),
  });
  expect(await references(middle)).toEqual(['100234']);
  // A deleted event's numbers and interrupted attempts went with it; a kept one keeps its interrupted attempt.
  expect(await references(oldDelivered)).toEqual([]);
  expect(await attemptStartRows(db, oldDelivered)).toEqual([]);
  expect(await attemptStartRows(db, middle)).toHaveLength(1);
  expect(await db('webhook_delivery_attempts').where({ event_id: middle }).select('response_body', 'response_code')).toEqual([
    { response_body: null, response_code: 500 },
  ]);

  expect(await counter('webhook_retention_deleted_events_total')).toBe(2);
  expect(await counter('webhook_retention_deleted_attempts_total')).toBe(7);
  expect(await counter('webhook_retention_dropped_payloads_total')).toBe(1);

  // A second purge finds nothing more to do.
  expect(await purge(90, 30)).toEqual({ deletedEvents: 0, deletedAttempts: 0, droppedPayloads: 0, passedOver: 0 });
});

// Before the next test: once a workflow was left on a queue no worker polls, this test server no longer skips time.
test('the limit counts in workflow time: an event too young today is purged once enough time has passed', async () => {
  const young = await aged({ status: 'delivered', ageDays: 80 });
  expect((await purge(90)).deletedEvents).toBe(0);
  await env.sleep(11 * DAY_MS);
  expect((await purge(90)).deletedEvents).toBe(1);
  expect(await exists(young)).toBe(false);
});

test('an event at max retries whose workflow runs (a resend) is passed over, its payload too, until it has ended', async () => {
  const resending = await aged({ status: 'max_retries_reached', ageDays: 100, attempts: 5 });
  const payloadDue = await aged({ status: 'max_retries_reached', ageDays: 40, attempts: 5 });
  // Workflows running under the events' ids, as a resend run would (here on a queue no worker polls).
  const handles = await Promise.all(
    [resending, payloadDue].map(async (eventId) =>
      client.workflow.start(deliverEvent, {
        taskQueue: `nobody-${randomUUID()}`,
        workflowId: await workflowIdOf(db, eventId),
        args: [{ eventId }],
        memo: memoOf({ key: (await eventRow(db, eventId)).uuid }),
      }),
    ),
  );

  expect(await purge(90, 30)).toEqual({ deletedEvents: 0, deletedAttempts: 0, droppedPayloads: 0, passedOver: 2 });
  expect(await eventRow(db, resending)).toMatchObject({ payload_dropped_at: null });
  expect(await eventRow(db, payloadDue)).toMatchObject({ payload_dropped_at: null });

  await Promise.all(handles.map((handle) => handle.terminate('resend done')));
  expect(await purge(90, 30)).toEqual({ deletedEvents: 1, deletedAttempts: 5, droppedPayloads: 1, passedOver: 0 });
  expect(await exists(resending)).toBe(false);
  expect((await eventRow(db, payloadDue)).payload).toBe('');
});

test('a row held by a resend being requested is not touched; once released it is', async () => {
  const held = await aged({ status: 'max_retries_reached', ageDays: 100 });
  const { created_at: createdAt } = await eventRow(db, held);
  // Only this event is due for these batches.
  const batch = { createdBefore: new Date(createdAt.getTime() + 1), limit: 10, passedOver: [], runningAmong: async () => [] };
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let holding!: () => void;
  const isHeld = new Promise<void>((resolve) => (holding = resolve));
  const resend = withEventHeldForResend(db, held, async (event) => {
    expect(event?.status).toBe('max_retries_reached');
    holding();
    await released;
  });
  try {
    await isHeld;
    expect(await deleteEndedEvents(db, batch)).toEqual({ events: 0, attempts: 0, passedOver: [], done: true });
  } finally {
    release();
    await resend;
  }
  expect(await deleteEndedEvents(db, batch)).toEqual({ events: 1, attempts: 1, passedOver: [], done: true });
  expect(await exists(held)).toBe(false);
});

test(`deletes in batches of ${RETENTION_BATCH_SIZE}, oldest first, each in its own activity`, async () => {
  const createdAt = new Date((await serverNow()) - 120 * DAY_MS);
  await db.raw(
    `INSERT INTO webhook_events (endpoint_id, event_type, payload_version, source_key, payload, status, attempts, created_at, workflow_started_at)
     SELECT ?, 'donation.completed', 'v2.1', 'bulk:' || n, '{}', 'delivered', 1, ?::timestamptz + n * interval '1 second', now()
     FROM generate_series(1, ?) AS n`,
    [endpointId, createdAt, RETENTION_BATCH_SIZE * 2 + 7],
  );
  const workflowId = `purge-${randomUUID()}`;
  const totals = await client.workflow.execute(purgeEndedEvents, { taskQueue, workflowId, args: [{ eventRetentionDays: 90, payloadRetentionDays: 90 }] });
  expect(totals.deletedEvents).toBe(RETENTION_BATCH_SIZE * 2 + 7);
  const history = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const activities = history.filter((event) => event.activityTaskScheduledEventAttributes).map((event) => event.activityTaskScheduledEventAttributes!.activityType!.name);
  // Three full or partial batches of deletions; with both limits equal there is no payload phase.
  expect(activities).toEqual(['deleteEndedEventsBatch', 'deleteEndedEventsBatch', 'deleteEndedEventsBatch']);
  expect(await db('webhook_events').where('source_key', 'like', 'bulk:%').count({ n: '*' })).toEqual([{ n: 0 }]);
});

