import { randomUUID } from 'node:crypto';
import { InterceptingCall, type Interceptor } from '@grpc/grpc-js';
import { Client, Connection } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { WorkflowBundle } from '@temporalio/worker';
import type { Config } from '../../src/config';
import { createDb, type Db } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { retriesEndingWithTheConnection } from '../../src/temporal/closed-connection';
import { deliveryQueueOf, requestResend } from '../../src/temporal/delivery-workflows';
import { bundleDeliveryWorkflows, createTestWorker, startDelivery } from '../support/delivery';
import { eventually } from '../support/eventually';
import type { ReceivedRequest, Reply } from '../../src/demo/subscriber-server';
import { createTimeSkippingEnvironment } from '../support/temporal';
import { subscribersPerTest } from '../support/test-subscribers';
import { basicAuth, NON_STAFF, STAFF, startTestApp, type TestApp } from '../support/test-app';
import { attemptRows, eventRow, insertEndpoint, insertEvent, TEST_KEYRING, workflowIdOf } from '../support/webhook-rows';
import { findEventDelivery } from '../../src/webhook-events/event-deliveries';

const MINUTE = 60_000;
const log = createLogger('silent');
const staff = basicAuth(STAFF.username, STAFF.password);
const nonStaff = basicAuth(NON_STAFF.username, NON_STAFF.password);

let env: TestWorkflowEnvironment;
let workflowBundle: WorkflowBundle;
let app: TestApp;
let db: Db;
let config: Config;
const apps: TestApp[] = [];
const startSubscriber = subscribersPerTest();

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  workflowBundle = await bundleDeliveryWorkflows();
  app = await startTestApp({ TEMPORAL_TASK_QUEUE: `resend-${randomUUID()}` }, { temporalClient: env.client, log });
  ({ db, config } = app);
});

afterAll(async () => {
  await Promise.all(apps.map((other) => other.close()));
  await app?.close();
  await env?.teardown();
});

/** The app's address; without Temporal, a second app over the same database that has no client for it. */
async function serve(withTemporal = true): Promise<string> {
  if (withTemporal) return app.baseUrl;
  const other = await startTestApp({}, { log, connect: () => createDb({ connectionString: app.databaseUrl }) });
  apps.push(other);
  return other.baseUrl;
}

const resend = (baseUrl: string, id: number | string, authorization = staff) =>
  fetch(`${baseUrl}/admin/api/webhook-events/${id}/resend`, { method: 'POST', headers: { authorization } });

async function subscriberFor(reply: (request: ReceivedRequest) => Reply | Promise<Reply>) {
  const subscriber = await startSubscriber({ now: () => env.currentTimeMs(), reply });
  return subscriber;
}

async function withWorker<T>(body: () => Promise<T>): Promise<T> {
  const worker = await createTestWorker({
    connection: env.nativeConnection,
    taskQueue: config.temporal.taskQueue,
    workflowBundle,
    db,
    log,
    keyring: TEST_KEYRING,
  });
  return worker.runUntil(body());
}

/**
 * A client whose next `count` calls of `method`, once `sendTogether(count)` asked for it, are held until the last of
 * them is made, then sent together; other calls go as they come.
 */
async function clientSendingTogether(method: string) {
  let held: Array<() => void> = [];
  let awaited = 0;
  const together: Interceptor = (options, nextCall) =>
    new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        if (!options.method_definition.path.endsWith(`/${method}`) || held.length === awaited) return next(metadata, listener);
        held.push(() => next(metadata, listener));
        if (held.length < awaited) return;
        const group = held;
        [held, awaited] = [[], 0];
        for (const send of group) send();
      },
    });
  const connection = await Connection.connect({ address: env.address, interceptors: [...retriesEndingWithTheConnection(), together] });
  return { client: new Client({ connection, namespace: env.namespace }), sendTogether: (count: number) => (awaited = count) };
}

const recorded = (eventId: number, status: string, attempts: number) =>
  eventually(
    async () => {
      const row = await eventRow(db, eventId);
      return row.status === status && row.attempts === attempts && row;
    },
    { what: `event ${eventId} at ${status} after ${attempts} attempts` },
  );

describe('refusals', () => {
  let baseUrl: string;
  beforeAll(async () => {
    baseUrl = await serve();
  });

  test('401 without credentials, 403 for a non-staff account', async () => {
    const unauthenticated = await fetch(`${baseUrl}/admin/api/webhook-events/1/resend`, { method: 'POST' });
    expect(unauthenticated.status).toBe(401);
    expect(await unauthenticated.json()).toMatchObject({ code: 'not_authenticated' });
    const forbidden = await resend(baseUrl, 1, nonStaff);
    expect(forbidden.status).toBe(403);
    expect(await forbidden.json()).toMatchObject({ code: 'permission_denied' });
  });

  test('400 for an id that is not a positive integer, 404 for an unknown event', async () => {
    for (const id of ['abc', '0', '-3', '1.5', '99999999999999999999']) {
      const response = await resend(baseUrl, id);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: 'invalid_parameter', problems: [expect.objectContaining({ in: 'path', name: 'id' })] });
    }
    const unknown = await resend(baseUrl, 424242);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: 'Webhook event not found', code: 'webhook_event_not_found' });
  });

  test('409 while the delivery has not started, and after delivery', async () => {
    const endpointId = await insertEndpoint(db, { url: 'http://127.0.0.1:9/unused' });
    const waiting = await insertEvent(db, endpointId);
    const pending = await resend(baseUrl, waiting.id);
    expect(pending.status).toBe(409);
    expect(await pending.json()).toMatchObject({ code: 'first_attempt_pending' });

    const delivered = await insertEvent(db, endpointId);
    await db('webhook_events').where({ id: delivered.id }).update({ status: 'delivered', attempts: 1 });
    const done = await resend(baseUrl, delivered.id);
    expect(done.status).toBe(409);
    expect(await done.json()).toMatchObject({ code: 'already_delivered' });
  });

  test('409 once retention dropped the payload: nothing is left to send; the detail says when it was dropped', async () => {
    const event = await insertEvent(db, await insertEndpoint(db, { url: 'http://127.0.0.1:9/unused' }));
    await db('webhook_events')
      .where({ id: event.id })
      .update({ status: 'max_retries_reached', attempts: 5, payload: '', payload_dropped_at: new Date('2025-10-01T01:15:00Z') });
    const refused = await resend(baseUrl, event.id);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ code: 'payload_dropped' });
    expect((await env.client.workflow.getHandle(event.workflowId).describe().catch(() => undefined))?.status).toBeUndefined();
    const detail = await fetch(`${baseUrl}/admin/api/webhook-events/${event.id}`, { headers: { authorization: staff } });
    expect(await detail.json()).toMatchObject({ payload: null, payload_is_json: false, payload_dropped_at: '2025-10-01T01:15:00Z' });
  });

  test('503 when the app has no way to reach Temporal', async () => {
    const withoutTemporal = await serve(false);
    const event = await insertEvent(db, await insertEndpoint(db, { url: 'http://127.0.0.1:9/unused' }));
    await db('webhook_events').where({ id: event.id }).update({ status: 'failed', attempts: 1 });
    const response = await resend(withoutTemporal, event.id);
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: 'delivery_unavailable' });
  });

  test('only POST is allowed', async () => {
    const response = await fetch(`${baseUrl}/admin/api/webhook-events/1/resend`, { headers: { authorization: staff } });
    expect(response.status).toBe(405);
  });
});

describe('while the first attempt is being made (the event still waiting in Postgres)', () => {
  /** A subscriber that holds the first request until the test lets it answer. */
  async function holdingSubscriber(first: Reply) {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const subscriber = await subscriberFor(async (request) => {
      if (request.index > 0) return { status: 200, body: 'manual' };
      await released;
      return first;
    });
    return { subscriber, release };
  }

  async function resendDuringFirstAttempt(first: Reply) {
    const { subscriber, release } = await holdingSubscriber(first);
    const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));
    const baseUrl = await serve();
    const status = await withWorker(async () => {
      await startDelivery(db, env.client, config.temporal.taskQueue, event.id);
      await subscriber.waitForRequests(1);
      expect(await eventRow(db, event.id)).toMatchObject({ status: 'waiting', attempts: 0 });
      const response = await resend(baseUrl, event.id);
      expect(response.status).toBe(202);
      expect(await response.json()).toEqual({ id: event.id, workflow_id: event.workflowId });
      release();
      return env.client.workflow.getHandle(event.workflowId).result();
    });
    return { subscriber, event, status };
  }

  test('is accepted and answered right after the attempt under way, when that one failed', async () => {
    const { subscriber, event, status } = await resendDuringFirstAttempt({ status: 500, body: 'first' });
    expect(status).toBe('delivered');
    const [first, manual] = subscriber.requests;
    expect(subscriber.requests).toHaveLength(2);
    expect(manual.atMs - first.atMs).toBeLessThan(MINUTE);
    expect((await attemptRows(db, event.id)).map((row) => [row.number, row.manual, row.outcome])).toEqual([
      [1, false, 'failed'],
      [2, true, 'delivered'],
    ]);
  });

  test('is accepted and needs nothing more when the attempt under way delivers', async () => {
    const { subscriber, event, status } = await resendDuringFirstAttempt({ status: 200, body: 'first' });
    expect(status).toBe('delivered');
    expect(subscriber.requests).toHaveLength(1);
    expect(await eventRow(db, event.id)).toMatchObject({ status: 'delivered', attempts: 1 });
  });
});

describe('fifteen requests around one attempt (RESEND_RULE)', () => {
  /** A subscriber that holds its answer to request `held` until released, and answers by `replies` (by index). */
  async function holdingAt(held: number, replies: Reply[]) {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => (release = resolve));
    const subscriber = await subscriberFor(async (request) => {
      if (request.index === held) await released;
      return replies[request.index] ?? { status: 200 };
    });
    return { subscriber, release };
  }

  const fifteen = async (baseUrl: string, eventId: number) => {
    const responses = await Promise.all(Array.from({ length: 15 }, () => resend(baseUrl, eventId)));
    expect(responses.map((response) => response.status)).toEqual(Array(15).fill(202));
  };

  test('while a scheduled attempt (the first) is under way: one manual attempt right after it', async () => {
    const { subscriber, release } = await holdingAt(0, [{ status: 500, body: 'first' }, { status: 200, body: 'manual' }]);
    const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));
    const baseUrl = await serve();
    const status = await withWorker(async () => {
      await startDelivery(db, env.client, config.temporal.taskQueue, event.id);
      await subscriber.waitForRequests(1);
      await fifteen(baseUrl, event.id);
      release();
      return env.client.workflow.getHandle(await workflowIdOf(db, event.id)).result();
    });
    expect(status).toBe('delivered');
    expect(subscriber.requests).toHaveLength(2);
    expect(subscriber.requests[1].atMs - subscriber.requests[0].atMs).toBeLessThan(MINUTE);
    expect((await attemptRows(db, event.id)).map((row) => [row.number, row.manual, row.outcome])).toEqual([
      [1, false, 'failed'],
      [2, true, 'delivered'],
    ]);
  });

  test('while an attempt made for another resend is under way: that attempt, nothing more', async () => {
    const replies: Reply[] = [{ status: 500, body: 'first' }, { status: 500, body: 'manual' }, { status: 200, body: 'scheduled' }];
    const { subscriber, release } = await holdingAt(1, replies);
    const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));
    const baseUrl = await serve();
    const status = await withWorker(async () => {
      await startDelivery(db, env.client, config.temporal.taskQueue, event.id);
      await recorded(event.id, 'failed', 1);
      expect((await resend(baseUrl, event.id)).status).toBe(202);
      await subscriber.waitForRequests(2);
      await fifteen(baseUrl, event.id);
      release();
      return env.client.workflow.getHandle(await workflowIdOf(db, event.id)).result();
    });
    expect(status).toBe('delivered');
    // The third request is the scheduled second attempt, five minutes after the first: no manual one in between.
    const [first, , scheduled] = subscriber.requests;
    expect(subscriber.requests).toHaveLength(3);
    expect(scheduled.atMs - first.atMs).toBeGreaterThanOrEqual(5 * MINUTE);
    expect((await attemptRows(db, event.id)).map((row) => [row.number, row.manual, row.outcome])).toEqual([
      [1, false, 'failed'],
      [2, true, 'failed'],
      [3, false, 'delivered'],
    ]);
  });
});

describe('during backoff', () => {
  test('a successful manual attempt delivers at once with the same id, and no scheduled attempt follows', async () => {
    const subscriber = await subscriberFor((request) => (request.index === 0 ? { status: 500, body: 'down' } : { status: 200, body: 'back' }));
    const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));
    const baseUrl = await serve();

    const status = await withWorker(async () => {
      await startDelivery(db, env.client, config.temporal.taskQueue, event.id);
      await recorded(event.id, 'failed', 1);
      const response = await resend(baseUrl, event.id);
      expect(response.status).toBe(202);
      expect(await response.json()).toEqual({ id: event.id, workflow_id: event.workflowId });
      return env.client.workflow.getHandle(event.workflowId).result();
    });

    expect(status).toBe('delivered');
    const [first, manual] = subscriber.requests;
    expect(subscriber.requests).toHaveLength(2);
    expect(manual.body.toString('utf8')).toBe(event.payload);
    expect(manual.atMs - first.atMs).toBeLessThan(MINUTE);
    expect(await attemptRows(db, event.id)).toMatchObject([
      { number: 1, manual: false, outcome: 'failed', response_code: 500 },
      { number: 2, manual: true, outcome: 'delivered', response_code: 200, response_body: 'back' },
    ]);
    expect(await eventRow(db, event.id)).toMatchObject({ status: 'delivered', attempts: 2, next_attempt_at: null });
  });

  test('a failed manual attempt neither counts towards the five nor moves the schedule', async () => {
    const answers: Reply[] = [{ status: 500, body: 'one' }, { status: 502, body: 'manual' }, { status: 200, body: 'two' }];
    const subscriber = await subscriberFor((request) => answers[request.index]);
    const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));
    const baseUrl = await serve();

    const status = await withWorker(async () => {
      await startDelivery(db, env.client, config.temporal.taskQueue, event.id);
      const afterFirst = await recorded(event.id, 'failed', 1);
      expect((await resend(baseUrl, event.id)).status).toBe(202);
      const afterManual = await recorded(event.id, 'failed', 2);
      expect(afterManual).toMatchObject({ last_response_code: 502, last_response_body: 'manual' });
      expect(afterManual.next_attempt_at).toEqual(afterFirst.next_attempt_at);
      return env.client.workflow.getHandle(event.workflowId).result();
    });

    expect(status).toBe('delivered');
    const [first, , second] = subscriber.requests;
    expect(second.atMs - first.atMs).toBeGreaterThanOrEqual(5 * MINUTE);
    expect(second.atMs - first.atMs).toBeLessThan(5 * MINUTE + 5_000);
    expect((await attemptRows(db, event.id)).map((row) => [row.number, row.manual, row.outcome])).toEqual([
      [1, false, 'failed'],
      [2, true, 'failed'],
      [3, false, 'delivered'],
    ]);
  });
});

describe('after max retries reached', () => {
  async function exhaust(reply: (request: ReceivedRequest) => Reply | Promise<Reply>) {
    const subscriber = await subscriberFor((request) => (request.index < 5 ? { status: 500, body: 'still down' } : reply(request)));
    const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));
    await startDelivery(db, env.client, config.temporal.taskQueue, event.id);
    expect(await env.client.workflow.getHandle(event.workflowId).result()).toBe('max_retries_reached');
    return { subscriber, event };
  }

  test('a resend makes one manual attempt with the same id and delivers; a second resend is refused', async () => {
    const baseUrl = await serve();
    await withWorker(async () => {
      const { subscriber, event } = await exhaust(() => ({ status: 200, body: 'finally' }));
      const response = await resend(baseUrl, event.id);
      expect(response.status).toBe(202);
      const { workflow_id } = (await response.json()) as { workflow_id: string };
      expect(workflow_id).toBe(event.workflowId);
      expect(await env.client.workflow.getHandle(workflow_id).result()).toBe('delivered');

      expect(subscriber.requests).toHaveLength(6);
      expect(subscriber.requests[5].body.toString('utf8')).toBe(event.payload);
      expect(await eventRow(db, event.id)).toMatchObject({
        status: 'delivered',
        attempts: 6,
        last_response_code: 200,
        last_response_body: 'finally',
      });
      expect((await attemptRows(db, event.id))[5]).toMatchObject({ number: 6, manual: true, outcome: 'delivered' });
      expect((await resend(baseUrl, event.id)).status).toBe(409);
    });
  });

  test('the resend takes its attempt number from the workflow, not from the count its caller read', async () => {
    await withWorker(async () => {
      const { subscriber, event } = await exhaust(() => ({ status: 200, body: 'finally' }));
      // Read while the fifth attempt ran (4 attempts then); the delivery workflow has ended since.
      const stale = { ...(await findEventDelivery(db, event.id))!, status: 'failed' as const, attempts: 4 };
      expect(await requestResend(env.client, await deliveryQueueOf(db, config.temporal.taskQueue), stale)).toBe('accepted');
      expect(await env.client.workflow.getHandle(event.workflowId).result()).toBe('delivered');
      expect(subscriber.requests).toHaveLength(6);
      expect(await eventRow(db, event.id)).toMatchObject({ status: 'delivered', attempts: 6 });
      expect((await attemptRows(db, event.id))[5]).toMatchObject({ number: 6, manual: true, outcome: 'delivered' });
    });
  });

  test('resends one after the other each make an attempt, numbered on', async () => {
    const baseUrl = await serve();
    await withWorker(async () => {
      const { subscriber, event } = await exhaust(() => ({ status: 503, body: 'not yet' }));
      for (const expected of [6, 7]) {
        expect((await resend(baseUrl, event.id)).status).toBe(202);
        expect(await env.client.workflow.getHandle(event.workflowId).result()).toBe('max_retries_reached');
        expect(await eventRow(db, event.id)).toMatchObject({ attempts: expected });
      }
      expect(subscriber.requests).toHaveLength(7);
      expect((await attemptRows(db, event.id)).slice(5).map((row) => [row.number, row.manual])).toEqual([
        [6, true],
        [7, true],
      ]);
    });
  });

  test('a failed resend leaves max retries reached; the same resend requested twice sends once', async () => {
    const baseUrl = await serve();
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    await withWorker(async () => {
      const { subscriber, event } = await exhaust(async () => {
        await held;
        return { status: 410, body: 'gone' };
      });
      const [one, two] = await Promise.all([resend(baseUrl, event.id), resend(baseUrl, event.id)]);
      expect([one.status, two.status]).toEqual([202, 202]);
      const ids = [((await one.json()) as { workflow_id: string }).workflow_id, ((await two.json()) as { workflow_id: string }).workflow_id];
      expect(ids).toEqual([event.workflowId, event.workflowId]);
      release();
      expect(await env.client.workflow.getHandle(ids[0]).result()).toBe('max_retries_reached');

      expect(subscriber.requests).toHaveLength(6);
      expect(await eventRow(db, event.id)).toMatchObject({
        status: 'max_retries_reached',
        attempts: 6,
        last_response_code: 410,
        last_response_body: 'gone',
        next_attempt_at: null,
      });
      expect((await attemptRows(db, event.id))[5]).toMatchObject({ number: 6, manual: true, outcome: 'failed' });
    });
  });

  test('resends at once after the run ended are all accepted, though the server starts one run and refuses the others', async () => {
    // Temporal's time-skipping server, now and then, answers signal-with-starts racing for an ended workflow's id by
    // starting one run and refusing the others as "already started" (the real server retries them inside, and they
    // signal that run). Each round sends four at once; with no worker, its run waits, and is ended before the next.
    const { subscriber, event } = await withWorker(() => exhaust(() => ({ status: 410, body: 'gone' })));
    const queue = await deliveryQueueOf(db, config.temporal.taskQueue);
    const ended = (await findEventDelivery(db, event.id))!;
    const { client, sendTogether } = await clientSendingTogether('SignalWithStartWorkflowExecution');
    try {
      for (let round = 1; round <= 40; round++) {
        sendTogether(4);
        expect(await Promise.all(Array.from({ length: 4 }, () => requestResend(client, queue, ended)))).toEqual(Array(4).fill('accepted'));
        if (round < 40) await env.client.workflow.getHandle(event.workflowId).terminate();
      }
    } finally {
      await client.connection.close();
    }
    // The last round's run takes its four requests as one (RESEND_RULE).
    expect(await withWorker(() => env.client.workflow.getHandle(event.workflowId).result())).toBe('max_retries_reached');
    expect(subscriber.requests).toHaveLength(6);
    expect(await eventRow(db, event.id)).toMatchObject({ status: 'max_retries_reached', attempts: 6 });
  });
});
