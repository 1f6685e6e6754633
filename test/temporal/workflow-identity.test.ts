import { randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { Db } from '../../src/db/knex';
import { memoOf } from '../../src/delivery-rules/event-identity';
import type { ReceivedRequest, Reply, Subscriber } from '../../src/demo/subscriber-server';
import { createLogger } from '../../src/logger';
import { createMetrics } from '../../src/observability/metrics';
import { relayPendingEvents } from '../../src/temporal/outbox-relay';
import { deliverEvent } from '../../workflows';
import { testDatabases } from '../support/database';
import { bundleDeliveryWorkflows, createTestWorker } from '../support/delivery';
import { eventually } from '../support/eventually';
import { captureLogs } from '../support/log-capture';
import { createTimeSkippingEnvironment } from '../support/temporal';
import { subscribersPerTest } from '../support/test-subscribers';
import { basicAuth, STAFF, startTestApp, type TestApp } from '../support/test-app';
import { eventRow, insertEndpoint, insertEvent, TEST_KEYRING } from '../support/webhook-rows';

/*
 * Event ids repeat across databases; an event's workflow must never be mistaken for another's (issue 20, critical).
 * These tests fail where the workflow id is made of the event id alone and "already started" is taken on trust.
 */

const log = createLogger('silent');
let env: TestWorkflowEnvironment;
let workflowBundle: WorkflowBundle;
const databases = testDatabases();
const apps: TestApp[] = [];
/** Workers still running when a test ends (it failed before stopping them). */
const workers = new Set<() => Promise<void>>();

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  workflowBundle = await bundleDeliveryWorkflows();
});

afterEach(async () => {
  await Promise.all([...workers].map((stop) => stop()));
});
// Its subscribers are closed after the workers above have stopped (hooks run in the order they are declared).
const startSubscriber = subscribersPerTest();

afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await databases.destroyAll();
  await env?.teardown();
});

/** A deployment's database: a fresh one from the same template, so its event ids start where every other's do. */
const newDatabase = databases.create;

async function subscriberFor(reply: (request: ReceivedRequest) => Reply = () => ({ status: 200, body: 'ok' })) {
  const subscriber = await startSubscriber({ now: () => env.currentTimeMs(), reply });
  return subscriber;
}

/** A deployment on the shared namespace: its database, its task queue (a worker reads its own database). */
async function deployment(db: Db, subscriber: Subscriber) {
  const taskQueue = `identity-${randomUUID()}`;
  const endpointId = await insertEndpoint(db, { url: subscriber.url });
  const worker = await createTestWorker({ connection: env.nativeConnection, taskQueue, workflowBundle, db, log, keyring: TEST_KEYRING });
  const running = worker.run();
  const stop = async () => {
    workers.delete(stop);
    worker.shutdown();
    await running;
  };
  workers.add(stop);
  return {
    taskQueue,
    newEvents: async (count: number) => {
      const events = [];
      for (let i = 0; i < count; i += 1) events.push(await insertEvent(db, endpointId));
      return events;
    },
    relay: () => relayPendingEvents({ db, client: env.client, taskQueue, log }),
    stop,
  };
}

const envelopeIds = (subscriber: Subscriber) => subscriber.requests.map((request) => (JSON.parse(request.body.toString('utf8')) as { id: number }).id);

const allDelivered = (db: Db, ids: number[]) =>
  eventually(async () => Number((await db('webhook_events').whereIn('id', ids).where('status', 'delivered').count({ n: '*' }))[0].n) === ids.length, {
    what: `events ${ids.join(', ')} delivered`,
  });

test("a new database against a Temporal holding an earlier database's workflows delivers every new event", async () => {
  const earlierDb = await newDatabase();
  const earlier = await deployment(earlierDb, await subscriberFor());
  const before = await earlier.newEvents(3);
  expect(await earlier.relay()).toBe(3);
  await allDelivered(
    earlierDb,
    before.map((event) => event.id),
  );
  await earlier.stop();

  // The database is re-created (or restored from an older backup): ids are handed out again, Temporal keeps its workflows.
  const db = await newDatabase();
  const subscriber = await subscriberFor();
  const fresh = await deployment(db, subscriber);
  const events = await fresh.newEvents(3);
  expect(events.map((event) => event.id)).toEqual(before.map((event) => event.id));
  expect(await fresh.relay()).toBe(3);
  await allDelivered(
    db,
    events.map((event) => event.id),
  );
  await fresh.stop();
  expect(new Set(envelopeIds(subscriber))).toEqual(new Set(events.map((event) => event.id)));
  expect(subscriber.requests).toHaveLength(events.length);
  expect(events.map((event) => event.workflowId)).not.toEqual(before.map((event) => event.workflowId));
});

test('two databases on one namespace (staging and production) deliver both, each only its own', async () => {
  const [stagingDb, productionDb] = [await newDatabase(), await newDatabase()];
  const [stagingSubscriber, productionSubscriber] = [await subscriberFor(), await subscriberFor()];
  const staging = await deployment(stagingDb, stagingSubscriber);
  const production = await deployment(productionDb, productionSubscriber);
  const stagingEvents = [];
  const productionEvents = [];
  for (let i = 0; i < 4; i += 1) {
    stagingEvents.push(...(await staging.newEvents(1)));
    productionEvents.push(...(await production.newEvents(1)));
    await Promise.all([staging.relay(), production.relay()]);
  }
  expect(stagingEvents.map((event) => event.id)).toEqual(productionEvents.map((event) => event.id));
  await allDelivered(
    stagingDb,
    stagingEvents.map((event) => event.id),
  );
  await allDelivered(
    productionDb,
    productionEvents.map((event) => event.id),
  );
  await Promise.all([staging.stop(), production.stop()]);
  const bodies = (subscriber: Subscriber) => subscriber.requests.map((request) => request.body.toString('utf8')).sort();
  expect(bodies(stagingSubscriber)).toEqual(stagingEvents.map((event) => event.payload).sort());
  expect(bodies(productionSubscriber)).toEqual(productionEvents.map((event) => event.payload).sort());
});

describe("a workflow id held by another event's workflow is refused loudly, never taken as started", () => {
  // A server of their own: a workflow task nobody takes (the squatters') stops a time-skipping server's clock for good.
  let squatted: TestWorkflowEnvironment;
  beforeAll(async () => {
    squatted = await createTimeSkippingEnvironment();
  });
  afterAll(async () => {
    await squatted?.teardown();
  });

  /** A workflow under the event's id that is not the event's: another key in its memo, or none (on a queue no worker polls). */
  const squat = (workflowId: string, memo: Record<string, unknown> | undefined) =>
    squatted.client.workflow.start(deliverEvent, { taskQueue: `nobody-${randomUUID()}`, workflowId, args: [{ eventId: 1 }], memo });

  test.each([
    ['another event key in its memo', () => memoOf({ key: randomUUID() })],
    ['no event key (started without one) under a new-style id', () => undefined],
  ])('the relay: %s', async (_, memo) => {
    const db = await newDatabase();
    const subscriber = await subscriberFor();
    const logs = captureLogs();
    const metrics = createMetrics();
    const taskQueue = `identity-${randomUUID()}`;
    const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));
    const squatter = await squat(event.workflowId, memo());

    expect(await relayPendingEvents({ db, client: squatted.client, taskQueue, log: logs.log, metrics })).toBe(0);
    const row = await eventRow(db, event.id);
    expect(row).toMatchObject({ status: 'waiting', workflow_started_at: null });
    expect(row.last_error).toContain(`Workflow id ${event.workflowId} belongs to another event's workflow`);
    expect(row.last_error).toContain(squatter.firstExecutionRunId);
    expect(logs.entries().filter((entry) => entry.level === 50)).toEqual([
      expect.objectContaining({
        msg: 'delivery workflow id belongs to another event; nothing was started for this event',
        eventId: event.id,
        workflowId: event.workflowId,
        eventKey: row.uuid,
        source: 'relay',
        existing: expect.objectContaining({ runId: squatter.firstExecutionRunId }),
      }),
    ]);
    expect(await metrics.registry.getSingleMetricAsString('webhook_delivery_workflow_conflicts_total')).toContain(
      'webhook_delivery_workflow_conflicts_total{source="relay"} 1',
    );
    // Its claim is kept: the next passes do not hammer Temporal with it; it is tried again once the claim runs out.
    expect(await relayPendingEvents({ db, client: squatted.client, taskQueue, log: logs.log, metrics })).toBe(0);
    expect(logs.entries().filter((entry) => entry.level === 50)).toHaveLength(1);
    await squatter.terminate('test done');
  });

  describe('a resend', () => {
    let app: TestApp;
    const metrics = createMetrics();
    beforeAll(async () => {
      app = await startTestApp({ TEMPORAL_TASK_QUEUE: `identity-resend-${randomUUID()}` }, { temporalClient: squatted.client, log, metrics });
      apps.push(app);
    });

    test('is answered 409 workflow_id_conflict and reaches no workflow; the event shows why', async () => {
      const event = await insertEvent(app.db, await insertEndpoint(app.db, { url: (await subscriberFor()).url }));
      await app.db('webhook_events').where({ id: event.id }).update({ status: 'failed', attempts: 1, workflow_started_at: app.db.fn.now() });
      const squatter = await squat(event.workflowId, memoOf({ key: randomUUID() }));
      const response = await fetch(`${app.baseUrl}/admin/api/webhook-events/${event.id}/resend`, {
        method: 'POST',
        headers: { authorization: basicAuth(STAFF.username, STAFF.password) },
      });
      expect(response.status).toBe(409);
      expect(await response.json()).toMatchObject({ code: 'workflow_id_conflict', error: expect.stringContaining(squatter.firstExecutionRunId) });
      // The other event's workflow got no signal, and no run was started under the id.
      const history = await squatter.fetchHistory();
      expect(history.events?.some((historyEvent) => historyEvent.workflowExecutionSignaledEventAttributes)).toBe(false);
      expect((await squatter.describe()).runId).toBe(squatter.firstExecutionRunId);
      const detail = await fetch(`${app.baseUrl}/admin/api/webhook-events/${event.id}`, { headers: { authorization: basicAuth(STAFF.username, STAFF.password) } });
      expect(await detail.json()).toMatchObject({ workflow_id: event.workflowId, last_error: expect.stringContaining('belongs to another event') });
      expect(await metrics.registry.getSingleMetricAsString('webhook_delivery_workflow_conflicts_total')).toContain(
        'webhook_delivery_workflow_conflicts_total{source="resend"} 1',
      );
      await squatter.terminate('test done');
    });
  });
});

describe('events whose delivery started before migration 017 keep their legacy workflow id', () => {
  // An app (and task queue) per test: a worker never takes over another test's workflows.
  let app: TestApp;
  beforeEach(async () => {
    app = await startTestApp({ TEMPORAL_TASK_QUEUE: `identity-legacy-${randomUUID()}` }, { temporalClient: env.client, log });
    apps.push(app);
  });

  const staff = { authorization: basicAuth(STAFF.username, STAFF.password) };

  /** An event as the previous version left it: workflow id `webhook-event-<id>`, its workflow started without a key. */
  async function legacyEvent(subscriber: Subscriber) {
    const event = await insertEvent(app.db, await insertEndpoint(app.db, { url: subscriber.url }));
    const workflowId = `webhook-event-${event.id}`;
    await app.db('webhook_events').where({ id: event.id }).update({ workflow_id: workflowId, workflow_started_at: app.db.fn.now() });
    const handle = await env.client.workflow.start(deliverEvent, { taskQueue: app.config.temporal.taskQueue, workflowId, args: [{ eventId: event.id }] });
    return { event, workflowId, handle };
  }

  const withWorker = async <T>(body: () => Promise<T>) =>
    (await createTestWorker({ connection: env.nativeConnection, taskQueue: app.config.temporal.taskQueue, workflowBundle, db: app.db, log, keyring: TEST_KEYRING })).runUntil(body());

  test('in backoff: the admin API names the legacy workflow (the Temporal UI link), and a resend reaches it', async () => {
    const subscriber = await subscriberFor((request) => (request.index === 0 ? { status: 500 } : { status: 200 }));
    const { event, workflowId, handle } = await legacyEvent(subscriber);
    await withWorker(async () => {
      await eventually(async () => (await eventRow(app.db, event.id)).status === 'failed', { what: 'the first attempt failed' });
      const detail = await fetch(`${app.baseUrl}/admin/api/webhook-events/${event.id}`, { headers: staff });
      expect(await detail.json()).toMatchObject({ workflow_id: workflowId });
      const resend = await fetch(`${app.baseUrl}/admin/api/webhook-events/${event.id}/resend`, { method: 'POST', headers: staff });
      expect(resend.status).toBe(202);
      expect(await resend.json()).toEqual({ id: event.id, workflow_id: workflowId });
      expect(await handle.result()).toBe('delivered');
    });
    // The legacy delivery answered the resend itself: one run, a manual second attempt.
    expect((await handle.describe()).runId).toBe(handle.firstExecutionRunId);
    expect(await eventRow(app.db, event.id)).toMatchObject({ status: 'delivered', attempts: 2, workflow_id: workflowId });
  });

  test('at max retries: a resend starts a new run under the legacy id, which carries the key from then on', async () => {
    let failing = true;
    const subscriber = await subscriberFor(() => (failing ? { status: 503 } : { status: 200 }));
    const { event, workflowId, handle } = await legacyEvent(subscriber);
    await withWorker(async () => {
      expect(await handle.result()).toBe('max_retries_reached');
      failing = false;
      const resend = await fetch(`${app.baseUrl}/admin/api/webhook-events/${event.id}/resend`, { method: 'POST', headers: staff });
      expect(resend.status).toBe(202);
      expect(await env.client.workflow.getHandle(workflowId).result()).toBe('delivered');
    });
    const resendRun = await env.client.workflow.getHandle(workflowId).describe();
    expect(resendRun.type).toBe('resendEvent');
    expect(resendRun.memo).toEqual(memoOf({ key: (await eventRow(app.db, event.id)).uuid }));
    expect(await eventRow(app.db, event.id)).toMatchObject({ status: 'delivered', attempts: 6 });
  });
});
