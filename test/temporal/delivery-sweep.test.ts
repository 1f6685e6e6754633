import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { Db } from '../../src/db/knex';
import { memoOf } from '../../src/delivery-rules/event-identity';
import type { ReceivedRequest, Reply, Subscriber } from '../../src/demo/subscriber-server';
import { createLogger } from '../../src/logger';
import { createMetrics } from '../../src/observability/metrics';
import { healLostDeliveries } from '../../src/temporal/delivery-sweep';
import { relayPendingEvents, startOutboxRelay } from '../../src/temporal/outbox-relay';
import { deliverEvent } from '../../workflows';
import { createTestDatabase } from '../support/database';
import { bundleDeliveryWorkflows, createTestWorker } from '../support/delivery';
import { eventually } from '../support/eventually';
import { captureLogs } from '../support/log-capture';
import { createTimeSkippingEnvironment } from '../support/temporal';
import { subscribersPerTest } from '../support/test-subscribers';
import { attemptRows, eventRow, insertEndpoint, insertEvent, type InsertedEvent, TEST_KEYRING } from '../support/webhook-rows';

/*
 * The healing sweep (src/temporal/delivery-sweep.ts): Temporal loses the workflows of events in backoff, or of events
 * the relay had just started (its state deleted, or restored from an older backup); Postgres still says when the
 * next attempt is due. A second, fresh test server under the same database plays the Temporal that came back empty.
 */

const log = createLogger('silent');
const HOUR_MS = 60 * 60_000;
let workflowBundle: WorkflowBundle;
let db: Db;
const environments: TestWorkflowEnvironment[] = [];
const startSubscriber = subscribersPerTest();

beforeAll(async () => {
  workflowBundle = await bundleDeliveryWorkflows();
  ({ db } = await createTestDatabase());
});

afterEach(async () => {
  await Promise.all(environments.splice(0).map((env) => env.teardown()));
});

afterAll(async () => {
  await db?.destroy();
});

/** A Temporal test server of its own; `lose()` tears it down, with every workflow it held. */
async function temporal() {
  const env = await createTimeSkippingEnvironment();
  environments.push(env);
  return {
    env,
    lose: async () => {
      environments.splice(environments.indexOf(env), 1);
      await env.teardown();
    },
  };
}

/** A subscriber whose requests are stamped with the workflow time of whichever server `clock` says. */
async function subscriberFor(reply: (request: ReceivedRequest) => Reply, clock: { env?: TestWorkflowEnvironment } = {}) {
  const subscriber = await startSubscriber({ now: () => clock.env?.currentTimeMs() ?? Date.now(), reply });
  return subscriber;
}

async function events(subscriber: Subscriber, count: number): Promise<InsertedEvent[]> {
  const endpointId = await insertEndpoint(db, { url: subscriber.url });
  const inserted = [];
  for (let i = 0; i < count; i += 1) inserted.push(await insertEvent(db, endpointId));
  return inserted;
}

const withWorker = async <T>(env: TestWorkflowEnvironment, taskQueue: string, body: () => Promise<T>) =>
  (await createTestWorker({ connection: env.nativeConnection, taskQueue, workflowBundle, db, log, keyring: TEST_KEYRING })).runUntil(body());

const recorded = (eventId: number, status: string, attempts: number) =>
  eventually(
    async () => {
      const row = await eventRow(db, eventId);
      return row.status === status && row.attempts === attempts && row;
    },
    { what: `event ${eventId} ${status} after ${attempts} attempts` },
  );

/** Time passes beyond the margin: the next attempt (or, for a waiting event, its start) lies 3 minutes back. */
const overdue = (ids: number[]) =>
  db('webhook_events')
    .whereIn('id', ids)
    .update({ next_attempt_at: db.raw("CASE WHEN status = 'failed' THEN now() - interval '3 minutes' END"), workflow_started_at: db.raw("now() - interval '3 minutes'") });

const numbered = async (eventId: number) => (await attemptRows(db, eventId)).map(({ number, manual, outcome }) => ({ number, manual, outcome }));

test('an event in backoff whose workflow Temporal lost is resumed where its schedule stood: after two scheduled failures, attempt 3', async () => {
  const clock: { env?: TestWorkflowEnvironment } = {};
  const subscriber = await subscriberFor(() => ({ status: 500, body: 'down' }), clock);
  const [event] = await events(subscriber, 1);
  const taskQueue = `sweep-${randomUUID()}`;

  const before = await temporal();
  clock.env = before.env;
  await withWorker(before.env, taskQueue, async () => {
    expect(await relayPendingEvents({ db, client: before.env.client, taskQueue, log })).toBe(1);
    await recorded(event.id, 'failed', 1);
    await before.env.sleep('6 minutes');
    await recorded(event.id, 'failed', 2);
  });
  await before.lose();

  const after = await temporal();
  clock.env = after.env;
  await overdue([event.id]);
  const logs = captureLogs();
  const metrics = createMetrics();
  expect(await healLostDeliveries({ db, client: after.env.client, taskQueue, log: logs.log, metrics })).toEqual({ checked: 1, healed: 1, conflicts: 0 });
  expect(logs.entries().filter((entry) => entry.level === 40)).toEqual([
    expect.objectContaining({
      msg: 'delivery healed: Temporal ran no workflow for this overdue event; resumed from what Postgres recorded',
      eventId: event.id,
      workflowId: event.workflowId,
      status: 'failed',
      attempts: 2,
    }),
  ]);
  expect(await metrics.registry.getSingleMetricAsString('webhook_deliveries_healed_total')).toContain('webhook_deliveries_healed_total{status="failed"} 1');

  const handle = after.env.client.workflow.getHandle(event.workflowId);
  const resumed = await handle.describe();
  expect(resumed.type).toBe('resumeDelivery');
  expect(resumed.memo).toEqual(memoOf({ key: (await eventRow(db, event.id)).uuid }));
  expect(await withWorker(after.env, taskQueue, () => handle.result())).toBe('max_retries_reached');

  // Three more scheduled attempts, not five: 3, 4 and 5, an hour and then four hours apart, as the schedule says.
  expect(await numbered(event.id)).toEqual([1, 2, 3, 4, 5].map((number) => ({ number, manual: false, outcome: 'failed' })));
  const [third, fourth, fifth] = subscriber.requests.slice(2);
  expect(subscriber.requests).toHaveLength(5);
  expect(fourth.atMs - third.atMs).toBeGreaterThanOrEqual(HOUR_MS);
  expect(fourth.atMs - third.atMs).toBeLessThan(HOUR_MS + 5_000);
  expect(fifth.atMs - fourth.atMs).toBeGreaterThanOrEqual(4 * HOUR_MS);
  expect(new Set(subscriber.requests.map((request) => request.body.toString('utf8')))).toEqual(new Set([event.payload]));
});

test('events the relay had started just before Temporal lost them are delivered by the relay’s own sweep', async () => {
  const subscriber = await subscriberFor(() => ({ status: 200, body: 'ok' }));
  const lost = await events(subscriber, 3);
  const taskQueue = `sweep-${randomUUID()}`;
  const before = await temporal();
  // Started, and lost before any worker took them.
  expect(await relayPendingEvents({ db, client: before.env.client, taskQueue, log })).toBe(3);
  await before.lose();
  await overdue(lost.map((event) => event.id));

  const after = await temporal();
  const relay = startOutboxRelay({ db, client: after.env.client, taskQueue, log, sweep: { intervalMs: 50 } });
  try {
    await withWorker(after.env, taskQueue, () => Promise.all(lost.map((event) => recorded(event.id, 'delivered', 1))));
  } finally {
    await relay.stop();
  }
  for (const event of lost) expect(await numbered(event.id)).toEqual([{ number: 1, manual: false, outcome: 'delivered' }]);
  expect(subscriber.requests.map((request) => request.body.toString('utf8')).sort()).toEqual(lost.map((event) => event.payload).sort());
});

test('a running workflow is left alone, and an overdue event is asked about once per margin', async () => {
  const subscriber = await subscriberFor((request) => (request.index === 0 ? { status: 500 } : { status: 200 }));
  const [event] = await events(subscriber, 1);
  const taskQueue = `sweep-${randomUUID()}`;
  const { env } = await temporal();
  const handle = env.client.workflow.getHandle(event.workflowId);
  await withWorker(env, taskQueue, async () => {
    expect(await relayPendingEvents({ db, client: env.client, taskQueue, log })).toBe(1);
    await recorded(event.id, 'failed', 1);
    // Overdue in Postgres, but its workflow runs (in backoff here; a worker that is down or an attempt held up by an
    // outage look the same): not the sweep's business.
    await overdue([event.id]);
    const run = (await handle.describe()).runId;
    expect(await healLostDeliveries({ db, client: env.client, taskQueue, log })).toEqual({ checked: 1, healed: 0, conflicts: 0 });
    expect(await healLostDeliveries({ db, client: env.client, taskQueue, log })).toEqual({ checked: 0, healed: 0, conflicts: 0 });
    expect(await handle.describe()).toMatchObject({ runId: run, type: 'deliverEvent', status: { name: 'RUNNING' } });
    expect(await handle.result()).toBe('delivered');
  });
  expect(await numbered(event.id)).toEqual([
    { number: 1, manual: false, outcome: 'failed' },
    { number: 2, manual: false, outcome: 'delivered' },
  ]);
});

test('a workflow that ended while Postgres says failed (terminated) is resumed; parallel sweeps resume each event once', async () => {
  const subscriber = await subscriberFor((request) => (request.index < 4 ? { status: 500 } : { status: 200 }));
  const failed = await events(subscriber, 4);
  const taskQueue = `sweep-${randomUUID()}`;
  const { env } = await temporal();
  await withWorker(env, taskQueue, async () => {
    expect(await relayPendingEvents({ db, client: env.client, taskQueue, log })).toBe(4);
    await Promise.all(failed.map((event) => recorded(event.id, 'failed', 1)));
    await Promise.all(failed.map((event) => env.client.workflow.getHandle(event.workflowId).terminate('operator mistake')));
    await overdue(failed.map((event) => event.id));

    // Three sweeps at once over four events, two each: every event is claimed by one of them.
    const passes = await Promise.all([1, 2, 3].map(() => healLostDeliveries({ db, client: env.client, taskQueue, log, batchSize: 2 })));
    expect(passes.reduce((sum, pass) => sum + pass.healed, 0)).toBe(4);
    expect(passes.map((pass) => pass.checked).sort((a, b) => a - b)).toEqual([0, 2, 2]);
    // (One by one: the time-skipping server loses count of concurrent waits for results.)
    for (const event of failed) expect(await env.client.workflow.getHandle(event.workflowId).result()).toBe('delivered');
  });
  for (const event of failed) {
    expect(await numbered(event.id)).toEqual([
      { number: 1, manual: false, outcome: 'failed' },
      { number: 2, manual: false, outcome: 'delivered' },
    ]);
  }
  expect(subscriber.requests).toHaveLength(8);
});

test("the sweep never resumes an event under another event's workflow: it reports the conflict", async () => {
  const subscriber = await subscriberFor(() => ({ status: 200 }));
  const [event] = await events(subscriber, 1);
  const { env } = await temporal();
  // Started, failed once, and its next attempt overdue.
  await db('webhook_events').where({ id: event.id }).update({ status: 'failed', attempts: 1, workflow_started_at: db.fn.now() });
  await overdue([event.id]);
  const squatter = await env.client.workflow.start(deliverEvent, {
    taskQueue: `nobody-${randomUUID()}`,
    workflowId: event.workflowId,
    args: [{ eventId: 1 }],
    memo: memoOf({ key: randomUUID() }),
  });
  const logs = captureLogs();
  const metrics = createMetrics();
  expect(await healLostDeliveries({ db, client: env.client, taskQueue: 'unused', log: logs.log, metrics })).toEqual({ checked: 1, healed: 0, conflicts: 1 });
  expect((await squatter.describe()).runId).toBe(squatter.firstExecutionRunId);
  expect((await eventRow(db, event.id)).last_error).toContain('belongs to another event');
  expect(logs.entries().filter((entry) => entry.level === 50)).toEqual([expect.objectContaining({ eventId: event.id, source: 'sweep' })]);
  expect(await metrics.registry.getSingleMetricAsString('webhook_delivery_workflow_conflicts_total')).toContain(
    'webhook_delivery_workflow_conflicts_total{source="sweep"} 1',
  );
  expect(subscriber.requests).toHaveLength(0);
});
