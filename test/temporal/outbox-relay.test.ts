import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import { createDb, type Db } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { createMetrics, type Metrics } from '../../src/observability/metrics';
import { relayPendingEvents, startNotifiedEvents, startOutboxRelay } from '../../src/temporal/outbox-relay';
import { createTemporalClient } from '../../src/temporal/client';
import { notifiedEvent } from '../../src/webhook-events/outbox';
import { claimUnstartedEvents, endClaim } from '../../src/webhook-events/relay-claims';
import { RELAY_LEAD_KEY } from '../../src/webhook-events/relay-session';
import { createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { listenForInserts } from '../support/insert-notifications';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { createTimeSkippingEnvironment } from '../support/temporal';
import { eventRow, insertEndpoint, insertEvent, TEST_KEYRING } from '../support/webhook-rows';
import { bundleDeliveryWorkflows, createTestWorker } from '../support/delivery';

const log = createLogger('silent');

let env: TestWorkflowEnvironment;
let workflowBundle: WorkflowBundle;
let db: Db;
let databaseUrl: string;
let subscriber: Subscriber;
let endpointId: number;
/** An endpoint whose events' facts are too long for a notification (8000 bytes): the trigger names no event. */
let longUrlEndpointId: number;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  workflowBundle = await bundleDeliveryWorkflows();
  ({ db, url: databaseUrl } = await createTestDatabase());
  subscriber = await startSubscriber();
  endpointId = await insertEndpoint(db, { url: subscriber.url });
  longUrlEndpointId = await insertEndpoint(db, { url: `${subscriber.url}?${'x'.repeat(8_000)}` });
});

beforeEach(async () => {
  // Each test sees only its own events.
  await db('webhook_events').whereNull('workflow_started_at').update({ workflow_started_at: db.fn.now() });
  subscriber.requests.length = 0;
});

afterAll(async () => {
  await subscriber?.close();
  await db?.destroy();
  await env?.teardown();
});

const newTaskQueue = () => `relay-${randomUUID()}`;

async function withWorker<T>(taskQueue: string, body: () => Promise<T>): Promise<T> {
  const worker = await createTestWorker({ connection: env.nativeConnection, taskQueue, workflowBundle, db, log, keyring: TEST_KEYRING });
  return worker.runUntil(body());
}

const started = (eventId: number) =>
  eventually(async () => (await eventRow(db, eventId)).workflow_started_at !== null, { what: `event ${eventId} to be started` });

/** The backend holding the relay's LISTEN, once it has one. */
const listenerPid = () =>
  eventually(
    async () => {
      const { rows } = await db.raw(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN webhook_event_inserted'`,
      );
      return rows[0]?.pid as number | undefined;
    },
    { what: 'the relay to LISTEN' },
  );

/**
 * Waits until a relay leads and has made the claim it makes on taking the lead, so that an event inserted next is
 * started from its notification: a warm-up event, started and its workflow ended.
 */
async function afterFirstClaim() {
  await listenerPid();
  const warmUp = await insertEvent(db, endpointId);
  await started(warmUp.id);
  await env.client.workflow.getHandle(warmUp.workflowId).terminate('warm-up');
}

test('a committed event wakes the relay through NOTIFY and is delivered (the poll interval is an hour)', async () => {
  const taskQueue = newTaskQueue();
  const relay = startOutboxRelay({ db, client: env.client, taskQueue, log, pollIntervalMs: 60 * 60_000 });
  try {
    await listenerPid();
    const status = await withWorker(taskQueue, async () => {
      const event = await insertEvent(db, endpointId);
      await started(event.id);
      return env.client.workflow.getHandle(event.workflowId).result();
    });
    expect(status).toBe('delivered');
    expect(subscriber.requests).toHaveLength(1);
  } finally {
    await relay.stop();
  }
});

test('the insert notification names the event with the facts a claim reads; facts too long name none', async () => {
  const listener = await listenForInserts(databaseUrl);
  const { payloads } = listener;
  try {
    const event = await insertEvent(db, endpointId);
    // The previous release writes no environment: migration 021's trigger gives it one before the facts are sent.
    const previous = await insertEvent(db, endpointId, { environment: 'stage', asPreviousRelease: true });
    // Marked started in the transaction that wrote it (a restore, a test): nothing to start, nothing sent.
    const startedAlready = await db.transaction(async (trx) => {
      const event = await insertEvent(trx, endpointId);
      await trx('webhook_events').where({ id: event.id }).update({ workflow_started_at: trx.fn.now() });
      return event;
    });
    const long = await insertEvent(db, longUrlEndpointId);
    await eventually(async () => payloads.length === 3, { what: 'three notifications' });
    const claimed = (await claimUnstartedEvents(db, 10, 30_000)).events;
    expect(claimed.map((claim) => claim.identity.eventId)).toEqual([event.id, previous.id, long.id]);
    expect(payloads.slice(0, 2).map(notifiedEvent)).toEqual(claimed.slice(0, 2));
    expect(notifiedEvent(payloads[0])?.facts).toMatchObject({ eventId: event.id, environment: 'prod', eventType: 'donation.completed' });
    expect(notifiedEvent(payloads[1])?.facts.environment).toBe('stage');
    expect(payloads[2]).toBe('');
    expect(notifiedEvent(payloads[2])).toBeUndefined();
    expect(payloads.map((payload) => notifiedEvent(payload)?.identity.eventId)).not.toContain(startedAlready.id);
    // A NOTIFY by hand on the channel names nothing either, rather than failing the relay.
    expect(notifiedEvent('{"id": 1')).toBeUndefined();
    expect(notifiedEvent('{"id": "1"}')).toBeUndefined();
    expect(notifiedEvent('null')).toBeUndefined();
    expect(notifiedEvent('[]')).toBeUndefined();
    expect(notifiedEvent(JSON.stringify({ ...JSON.parse(payloads[0]!), trace_context: 'x' }))).toBeUndefined();
  } finally {
    await listener.close();
  }
});

test('the leading relay starts a notified event without claiming it, and claims one the notification did not name', async () => {
  const taskQueue = newTaskQueue();
  const relay = startOutboxRelay({ db, client: env.client, taskQueue, log, pollIntervalMs: 60 * 60_000, sweep: false });
  let notified!: Awaited<ReturnType<typeof insertEvent>>;
  let long!: Awaited<ReturnType<typeof insertEvent>>;
  try {
    await afterFirstClaim();
    [notified, long] = [await insertEvent(db, endpointId), await insertEvent(db, longUrlEndpointId)];
    await started(notified.id);
    await started(long.id);
    expect((await eventRow(db, notified.id)).relay_claimed_at).toBeNull();
    expect((await eventRow(db, long.id)).relay_claimed_at).not.toBeNull();
  } finally {
    await relay.stop();
  }
  // No worker polls this queue.
  for (const event of [notified, long]) await env.client.workflow.getHandle(event.workflowId).terminate('test done');
});

test("the leader's claims leave alone an event it is starting from its notification, unclaimed", async () => {
  const taskQueue = newTaskQueue();
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  // After the warm-up, Temporal answers the first start only when the test says so: meanwhile its row looks
  // unstarted and unclaimed.
  const { client, startedIds, arm } = recordingClient((start) => answered.then(start));
  const relay = startOutboxRelay({ db, client, taskQueue, log, pollIntervalMs: 60 * 60_000, sweep: false });
  let slow!: Awaited<ReturnType<typeof insertEvent>>;
  let long!: Awaited<ReturnType<typeof insertEvent>>;
  try {
    await afterFirstClaim();
    arm();
    slow = await insertEvent(db, endpointId);
    await eventually(async () => startedIds.length === 1, { what: 'the notified start to be asked' });
    // A notification that names no event: the relay claims the table while the slow start is under way.
    long = await insertEvent(db, longUrlEndpointId);
    await started(long.id);
    expect((await eventRow(db, slow.id)).relay_claimed_at).toBeNull();
    answer();
    await started(slow.id);
    expect(startedIds).toEqual([slow.workflowId, long.workflowId]);
  } finally {
    answer();
    await relay.stop();
  }
  for (const event of [slow, long]) await env.client.workflow.getHandle(event.workflowId).terminate('test done');
});

test('a notified event whose start failed is claimed and started by a later pass', async () => {
  const taskQueue = newTaskQueue();
  // After the warm-up, Temporal refuses the first start.
  const { client, startedIds, arm } = recordingClient(() => Promise.reject(new Error('deadline exceeded')));
  // The failed pass's events are retried at the next claim, a poll away: within 30 s only if the relay let them go.
  const relay = startOutboxRelay({ db, client, taskQueue, log, pollIntervalMs: 100, sweep: false });
  let event!: Awaited<ReturnType<typeof insertEvent>>;
  try {
    await afterFirstClaim();
    arm();
    event = await insertEvent(db, endpointId);
    await started(event.id);
    expect(startedIds).toEqual([event.workflowId, event.workflowId]);
    expect((await eventRow(db, event.id)).relay_claimed_at).not.toBeNull();
  } finally {
    await relay.stop();
  }
  await env.client.workflow.getHandle(event.workflowId).terminate('test done');
});

test('after losing its session (its LISTEN, and the lead) the relay opens another, leads again and still reacts at once', async () => {
  const taskQueue = newTaskQueue();
  const relay = startOutboxRelay({ db, client: env.client, taskQueue, log, pollIntervalMs: 60 * 60_000 });
  try {
    const firstPid = await listenerPid();
    await db.raw('SELECT pg_terminate_backend(?)', [firstPid]);
    const secondPid = await eventually(
      async () => {
        const pid = await listenerPid();
        return pid !== firstPid && pid;
      },
      { what: 'a new LISTEN connection' },
    );
    expect(secondPid).not.toBe(firstPid);
    const event = await insertEvent(db, endpointId);
    await started(event.id);
  } finally {
    await relay.stop();
  }
});

/**
 * A client on the test server's connection that notes the workflow id of every start it makes. Given `first`, it
 * makes the first start after `arm()` (which empties the list) through it: held back, or refused.
 */
function recordingClient(first?: <T>(start: () => Promise<T>) => Promise<T>) {
  const startedIds: string[] = [];
  let armed = false;
  const client = new Client({
    connection: env.client.connection,
    interceptors: {
      workflow: [
        {
          startWithDetails: async (input, next) => {
            startedIds.push(input.options.workflowId);
            return first && armed && startedIds.length === 1 ? first(() => next(input)) : next(input);
          },
        },
      ],
    },
  });
  return {
    client,
    startedIds,
    arm: () => {
      armed = true;
      startedIds.length = 0;
    },
  };
}

/** A client on the test server's connection whose starts of the workflows `refuses` names fail, as past their deadline. */
function refusingClient(refuses: (workflowId: string) => boolean) {
  return new Client({
    connection: env.client.connection,
    interceptors: {
      workflow: [{ startWithDetails: (input, next) => (refuses(input.options.workflowId) ? Promise.reject(new Error('deadline exceeded')) : next(input)) }],
    },
  });
}

/** Whether the relay that reports to `metrics` says it leads. */
const leads = async (metrics: Metrics) => (await metrics.registry.getSingleMetric('webhook_relay_leading')!.get()).values[0]?.value === 1;

/** The lead's lock held by the test itself: a leader that relays nothing (frozen, or cut off from Temporal). */
async function holdTheLead() {
  const connection = await db.client.acquireConnection();
  await db.raw(`SELECT pg_advisory_lock(${RELAY_LEAD_KEY})`).connection(connection);
  let held = true;
  return async () => {
    if (!held) return;
    held = false;
    await db.raw(`SELECT pg_advisory_unlock(${RELAY_LEAD_KEY})`).connection(connection);
    await db.client.releaseConnection(connection);
  };
}

test('of two relays on one database, the leading one starts every new event; when its session ends, the other leads at once', async () => {
  const taskQueue = newTaskQueue();
  // Polls an hour apart: every pass after the first is a notification's or the lead's.
  const [a, b] = [recordingClient(), recordingClient()];
  const [metricsA, metricsB] = [createMetrics(), createMetrics()];
  const relayA = startOutboxRelay({ db, client: a.client, taskQueue, log, pollIntervalMs: 60 * 60_000, metrics: metricsA });
  await eventually(() => leads(metricsA), { what: 'relay A to lead' });
  const relayB = startOutboxRelay({ db, client: b.client, taskQueue, log, pollIntervalMs: 60 * 60_000, metrics: metricsB });
  try {
    await withWorker(taskQueue, async () => {
      const first = [];
      for (let i = 0; i < 10; i += 1) {
        const event = await insertEvent(db, endpointId);
        first.push(event);
        await started(event.id);
      }
      expect(a.startedIds).toEqual(first.map((event) => event.workflowId));
      expect(b.startedIds).toEqual([]);
      expect(await leads(metricsB)).toBe(false);

      // A's session cut as a crash cuts it: Postgres gives the lead to B's waiting session, no poll needed.
      await db.raw(
        `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      );
      await eventually(() => leads(metricsB), { what: 'relay B to lead' });
      const next = await insertEvent(db, endpointId);
      await started(next.id);
      expect(b.startedIds).toEqual([next.workflowId]);
      expect(await leads(metricsA)).toBe(false);
      // One at a time: the test server's time skipping loses count of results awaited at once.
      for (const event of [...first, next]) await env.client.workflow.getHandle(event.workflowId).result();
    });
    expect(subscriber.requests).toHaveLength(11);
  } finally {
    await Promise.all([relayA.stop(), relayB.stop()]);
  }
});

test('a relay that may not lead (its worker version is not current) gives the lead up to one that may', async () => {
  const taskQueue = newTaskQueue();
  let current = true;
  const [a, b] = [recordingClient(), recordingClient()];
  const [metricsA, metricsB] = [createMetrics(), createMetrics()];
  const relayA = startOutboxRelay({ db, client: a.client, taskQueue, log, pollIntervalMs: 50, metrics: metricsA, mayLead: () => current });
  await eventually(() => leads(metricsA), { what: 'relay A to lead' });
  const relayB = startOutboxRelay({ db, client: b.client, taskQueue, log, pollIntervalMs: 60 * 60_000, metrics: metricsB });
  try {
    current = false;
    await eventually(() => leads(metricsB), { what: 'relay B to lead' });
    expect(await leads(metricsA)).toBe(false);
    const event = await insertEvent(db, endpointId);
    await withWorker(taskQueue, async () => {
      await started(event.id);
      await env.client.workflow.getHandle(event.workflowId).result();
    });
    expect(b.startedIds).toEqual([event.workflowId]);
    expect(a.startedIds).toEqual([]);
  } finally {
    await Promise.all([relayA.stop(), relayB.stop()]);
  }
});

test('time limits set for its connections end neither its wait for the lead nor its idle lead', async () => {
  const limits = new URL(databaseUrl);
  limits.searchParams.set('options', '-c statement_timeout=200 -c idle_session_timeout=300');
  const limited = createDb({ connectionString: limits.toString() });
  const taskQueue = newTaskQueue();
  const release = await holdTheLead();
  const metrics = createMetrics();
  const relay = startOutboxRelay({ db: limited, client: env.client, taskQueue, log, pollIntervalMs: 60 * 60_000, metrics });
  const sessionPid = async () => {
    const { rows } = await db.raw(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`);
    return rows.map((row: { pid: number }) => row.pid) as number[];
  };
  try {
    const [waiting] = await eventually(async () => ((await sessionPid()).length === 1 ? sessionPid() : undefined), { what: 'the relay to wait for the lead' });
    // Past both limits, several times over: the same session still waits.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await sessionPid()).toEqual([waiting]);
    await release();
    await eventually(() => leads(metrics), { what: 'the relay to lead' });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await leads(metrics)).toBe(true);
    const event = await insertEvent(db, endpointId);
    await started(event.id);
    await env.client.workflow.getHandle(event.workflowId).terminate('test done');
  } finally {
    await release();
    await relay.stop();
    await limited.destroy();
  }
});

test('a relay without the lead starts an event the leader left waiting, once it has waited leftWaitingMs', async () => {
  const taskQueue = newTaskQueue();
  const release = await holdTheLead();
  const metrics = createMetrics();
  const relay = startOutboxRelay({ db, client: env.client, taskQueue, log, pollIntervalMs: 50, leftWaitingMs: 1_500, metrics });
  try {
    const event = await insertEvent(db, endpointId);
    await withWorker(taskQueue, async () => {
      await started(event.id);
      await env.client.workflow.getHandle(event.workflowId).result();
    });
    const { rows } = await db.raw(`SELECT extract(epoch FROM relay_claimed_at - created_at) * 1000 AS waited_ms FROM webhook_events WHERE id = ?`, [event.id]);
    expect(Number(rows[0].waited_ms)).toBeGreaterThanOrEqual(1_500);
    expect(await leads(metrics)).toBe(false);
    await release();
    await eventually(() => leads(metrics), { what: 'the relay to lead once the lock is free' });
  } finally {
    await release();
    await relay.stop();
  }
});

test('a slow start holds back no later event: a notification during a pass begins another pass beside it', async () => {
  const taskQueue = newTaskQueue();
  const slow = await insertEvent(db, endpointId);
  const slowWorkflowId = (await eventRow(db, slow.id)).workflow_id;
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  // Temporal answering one start only when the test says so (a start that waits behind a backlog).
  const client = new Client({
    connection: env.client.connection,
    interceptors: {
      workflow: [{ startWithDetails: async (input, next) => (input.options.workflowId === slowWorkflowId ? answered.then(() => next(input)) : next(input)) }],
    },
  });
  const relay = startOutboxRelay({ db, client, taskQueue, log, pollIntervalMs: 60 * 60_000, sweep: false });
  let next: Awaited<ReturnType<typeof insertEvent>>;
  try {
    await eventually(async () => (await eventRow(db, slow.id)).relay_claimed_at !== null, { what: 'the slow event to be claimed' });
    next = await insertEvent(db, endpointId);
    await started(next.id);
    expect((await eventRow(db, slow.id)).workflow_started_at).toBeNull();
    answer();
    await started(slow.id);
  } finally {
    answer();
    await relay.stop();
  }
  // No worker polls this queue: the two workflows would wait for one.
  for (const workflowId of [slowWorkflowId, next.workflowId]) await env.client.workflow.getHandle(workflowId).terminate('test done');
});

test('starting is idempotent: a second start of the same event counts as done and sends nothing twice', async () => {
  const taskQueue = newTaskQueue();
  const event = await insertEvent(db, endpointId);
  await withWorker(taskQueue, async () => {
    expect(await relayPendingEvents({ db, client: env.client, taskQueue })).toBe(1);
    // As if the relay had crashed between starting the workflow and marking the row, and its claim had run out.
    const crashed = { workflow_started_at: null, relay_claimed_at: db.raw("now() - interval '31 seconds'") };
    await db('webhook_events').where({ id: event.id }).update(crashed);
    expect(await relayPendingEvents({ db, client: env.client, taskQueue })).toBe(1);
    expect(await env.client.workflow.getHandle(event.workflowId).result()).toBe('delivered');
    // Even after it finished, the same id is not run again.
    await db('webhook_events').where({ id: event.id }).update(crashed);
    expect(await relayPendingEvents({ db, client: env.client, taskQueue })).toBe(1);
  });
  expect(subscriber.requests).toHaveLength(1);
  expect((await eventRow(db, event.id)).workflow_started_at).toBeInstanceOf(Date);
});

test('parallel relays split the outbox in batches without taking the same row (SKIP LOCKED)', async () => {
  // No worker polls this queue: the workflows are only started here.
  const taskQueue = newTaskQueue();
  const events = [];
  for (let i = 0; i < 25; i += 1) events.push(await insertEvent(db, endpointId));

  const [first, second] = await Promise.all([
    relayPendingEvents({ db, client: env.client, taskQueue, batchSize: 10 }),
    relayPendingEvents({ db, client: env.client, taskQueue, batchSize: 10 }),
  ]);
  expect(first + second).toBe(20);
  expect(await relayPendingEvents({ db, client: env.client, taskQueue, batchSize: 10 })).toBe(5);
  expect(await relayPendingEvents({ db, client: env.client, taskQueue, batchSize: 10 })).toBe(0);

  const descriptions = await Promise.all(events.map((e) => env.client.workflow.getHandle(e.workflowId).describe()));
  expect(descriptions.every((d) => d.taskQueue === taskQueue && d.type === 'deliverEvent')).toBe(true);
  await Promise.all(events.map((e) => env.client.workflow.getHandle(e.workflowId).terminate('test done')));
});

test('an event the previous release wrote, without the facts it does not know, is started with them all the same', async () => {
  // No worker polls this queue: the workflow is only started and described here.
  const taskQueue = newTaskQueue();
  const event = await insertEvent(db, endpointId, { environment: 'stage', asPreviousRelease: true });
  const row = await eventRow(db, event.id);
  expect(row).toMatchObject({ environment: 'stage', transaction_id: expect.stringMatching(/^tx-/) });

  expect(await relayPendingEvents({ db, client: env.client, taskQueue })).toBe(1);
  const description = await env.client.workflow.getHandle(event.workflowId).describe();
  expect(description.typedSearchAttributes.getAll().map(({ key, value }) => [key.name, value])).toContainEqual(['WebhookEnvironment', 'stage']);
  expect(await description.staticDetails()).toEqual(expect.stringContaining(`**Transaction:** ${row.transaction_id}\n**Environment:** stage`));
  await env.client.workflow.getHandle(event.workflowId).terminate('test done');
});

test('a Temporal that accepts connections but never answers fails the pass within the start deadline, rows untouched', async () => {
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((socket) => {
    sockets.add(socket); // accepted, never answered
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  // The relay's own client: its retries end when the connection closes, where the SDK's default retry interceptor
  // left one on a timer that threw "Channel has been shut down" into whichever test file ran next in this worker.
  const client = createTemporalClient({ address: `127.0.0.1:${(silent.address() as net.AddressInfo).port}`, namespace: 'default' });
  const taskQueue = newTaskQueue();
  try {
    const event = await insertEvent(db, endpointId);
    const began = Date.now();
    const pass = relayPendingEvents({ db, client, taskQueue, log, startTimeoutMs: 500 });
    await expect(pass).rejects.toThrow();
    expect(Date.now() - began).toBeLessThan(5_000);
    expect(sockets.size).toBeGreaterThan(0); // it did reach the silent frontend

    // Not marked and not left locked: a relay with a working Temporal takes the row at once.
    expect((await eventRow(db, event.id)).workflow_started_at).toBeNull();
    expect(await relayPendingEvents({ db, client: env.client, taskQueue, log })).toBe(1);
    expect((await eventRow(db, event.id)).workflow_started_at).not.toBeNull();
  } finally {
    await client.connection.close().catch(() => undefined);
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});

test('a pass in which some starts failed while others succeeded counts, and frees only the failed events', async () => {
  const taskQueue = newTaskQueue();
  const [refused, accepted] = [await insertEvent(db, endpointId), await insertEvent(db, endpointId)];
  const refusedWorkflowId = (await eventRow(db, refused.id)).workflow_id;
  // Temporal answering one start and not the other (a start past its deadline under a backlog).
  const client = refusingClient((workflowId) => workflowId === refusedWorkflowId);

  // Not thrown, so the relay does not back off as from a Temporal that is down.
  expect(await relayPendingEvents({ db, client, taskQueue, log })).toBe(1);
  expect((await eventRow(db, accepted.id)).workflow_started_at).not.toBeNull();
  const freed = await eventRow(db, refused.id);
  expect([freed.workflow_started_at, freed.relay_claimed_at]).toEqual([null, null]);
  // The next pass takes it again.
  expect(await relayPendingEvents({ db, client: env.client, taskQueue, log })).toBe(1);
  expect((await eventRow(db, refused.id)).workflow_started_at).not.toBeNull();
});

test('a notified pass in which some starts failed marks the others started and leaves the failed ones to the next claim', async () => {
  const taskQueue = newTaskQueue();
  const listener = await listenForInserts(databaseUrl);
  let refused!: Awaited<ReturnType<typeof insertEvent>>;
  let accepted!: Awaited<ReturnType<typeof insertEvent>>;
  try {
    [refused, accepted] = [await insertEvent(db, endpointId), await insertEvent(db, endpointId)];
    await eventually(async () => listener.payloads.length === 2, { what: 'two notifications' });
    const events = listener.payloads.map(notifiedEvent).filter((event) => event !== undefined);
    const client = refusingClient((workflowId) => workflowId === refused.workflowId);
    const released: number[] = [];

    // Not thrown, so the relay does not back off as from a Temporal that is down.
    expect(await startNotifiedEvents({ db, client, taskQueue, log }, events, (eventIds) => released.push(...eventIds))).toBe(1);
    // Started the usual way (not eagerly): the pass's one statement marks it, and claims nothing.
    const marked = await eventRow(db, accepted.id);
    expect(marked.workflow_started_at).not.toBeNull();
    expect(marked.relay_claimed_at).toBeNull();
    const left = await eventRow(db, refused.id);
    expect([left.workflow_started_at, left.relay_claimed_at]).toEqual([null, null]);
    // Both are let go: the relay's claims need not leave either alone any longer.
    expect(released.sort((a, b) => a - b)).toEqual([refused.id, accepted.id]);
    // The next claim takes the refused one.
    expect(await relayPendingEvents({ db, client: env.client, taskQueue, log })).toBe(1);
    expect((await eventRow(db, refused.id)).workflow_started_at).not.toBeNull();
  } finally {
    await listener.close();
  }
  // No worker polls this queue.
  for (const event of [refused, accepted]) await env.client.workflow.getHandle(event.workflowId).terminate('test done');
});

test('a pass in which every start failed still fails, for the relay to back off', async () => {
  const taskQueue = newTaskQueue();
  const event = await insertEvent(db, endpointId);
  const client = refusingClient(() => true);
  await expect(relayPendingEvents({ db, client, taskQueue, log })).rejects.toThrow('deadline exceeded');
  expect((await eventRow(db, event.id)).relay_claimed_at).toBeNull();
});

test('no row stays locked while Temporal answers: an attempt started eagerly can record its status meanwhile', async () => {
  const taskQueue = newTaskQueue();
  const event = await insertEvent(db, endpointId);
  // A client whose start waits until the test has looked at the row.
  const client = new Client({ connection: env.connection });
  const start = client.workflow.start.bind(client.workflow);
  let startAsked!: () => void;
  const asked = new Promise<void>((resolve) => (startAsked = resolve));
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  client.workflow.start = (async (...args: Parameters<typeof start>) => {
    startAsked();
    await answered;
    return start(...args);
  }) as typeof start;

  const pass = relayPendingEvents({ db, client, taskQueue, log });
  await asked;
  const duringStart = await db.transaction(async (trx) => {
    // NOWAIT: fails at once (lock_not_available) while the relay holds the row locked.
    await trx.raw('SELECT id FROM webhook_events WHERE id = ? FOR UPDATE NOWAIT', [event.id]);
    return trx('webhook_events').where({ id: event.id }).first('workflow_started_at', db.raw('relay_claimed_at IS NOT NULL AS claimed'));
  });
  expect(duringStart).toEqual({ workflow_started_at: null, claimed: true });
  answer();
  expect(await pass).toBe(1);
  // Started, keeping the time of its claim (when the pass began).
  expect(await db('webhook_events').where({ id: event.id }).first(db.raw('workflow_started_at >= relay_claimed_at AS started_after_claim'))).toEqual({
    started_after_claim: true,
  });
  await env.client.workflow.getHandle(event.workflowId).terminate('test done');
});

test('a live claim keeps other relays off an event; a claim that ran out (its relay died) is taken again', async () => {
  const taskQueue = newTaskQueue();
  const event = await insertEvent(db, endpointId);
  await db('webhook_events').where({ id: event.id }).update({ relay_claimed_at: db.fn.now() });
  expect(await relayPendingEvents({ db, client: env.client, taskQueue, log })).toBe(0);
  // The relay's claims last 30 s (six start deadlines of 5 s).
  await db('webhook_events').where({ id: event.id }).update({ relay_claimed_at: db.raw("now() - interval '31 seconds'") });
  expect(await relayPendingEvents({ db, client: env.client, taskQueue, log })).toBe(1);
  expect((await eventRow(db, event.id)).workflow_started_at).toBeInstanceOf(Date);
  await env.client.workflow.getHandle(event.workflowId).terminate('test done');
});

test('a relay whose claim ran out does not free the claim another relay took since', async () => {
  const [first, second] = [await insertEvent(db, endpointId), await insertEvent(db, endpointId)];
  const slow = await claimUnstartedEvents(db, 10, 30_000);
  expect(slow.events.map((event) => event.identity.eventId)).toEqual([first.id, second.id]);
  // Its claim runs out (it stalled); another relay claims the events and is starting them.
  await db('webhook_events').whereIn('id', [first.id, second.id]).update({ relay_claimed_at: db.raw("now() - interval '1 minute'") });
  const other = await claimUnstartedEvents(db, 10, 30_000);
  expect(other.events).toHaveLength(2);
  // The slow relay started the first; the second failed: it must not free the other relay's claim on it.
  await endClaim(db, slow, [first.id]);
  expect(await claimUnstartedEvents(db, 10, 30_000)).toEqual({ events: [], claimedAt: null });
  await endClaim(db, other, []);
  expect((await claimUnstartedEvents(db, 10, 30_000)).events.map((event) => event.identity.eventId)).toEqual([second.id]);
  expect((await eventRow(db, first.id)).workflow_started_at).toBeInstanceOf(Date);
});
