import { randomBytes, randomUUID } from 'node:crypto';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createKeyring } from '../../src/secrets/keyring';
import { createMetrics } from '../../src/observability/metrics';
import { relayPendingEvents } from '../../src/temporal/outbox-relay';
import { captureLogs } from '../support/log-capture';
import { PLATFORM_DONOR } from '../support/platform-donor';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { createTimeSkippingEnvironment } from '../support/temporal';
import { basicAuth, STAFF, startTestApp, type TestApp } from '../support/test-app';
import { bundleDeliveryWorkflows, createTestWorker } from '../support/delivery';

const WRONG_PASSWORD = 'wrong-pw-Kx4!guess';
const ENDPOINT_PASSWORD = 'endpoint-pw-Lm2$crm';
const SIGNING_KEY = randomBytes(32).toString('base64');
const SIGNING_SECRET = `whsec_${SIGNING_KEY}`;
const METRICS_TOKEN = `metrics-${randomUUID()}`;
const JWT_SECRET = `jwt-${randomUUID()}-${randomUUID()}`;

let env: TestWorkflowEnvironment;
let app: TestApp;
let subscriber: Subscriber | undefined;

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
});

afterAll(async () => {
  await app?.close();
  await subscriber?.close();
  await env?.teardown();
});

test('requests and deliveries with credentials leave request ids, event ids, workflow ids and attempts in the logs, and no secret', async () => {
  const logs = captureLogs();
  const metrics = createMetrics();
  const taskQueue = `observability-${randomUUID()}`;
  app = await startTestApp({ JWT_SECRET, METRICS_TOKEN, TEMPORAL_TASK_QUEUE: taskQueue }, { log: logs.log, temporalClient: env.client, metrics });
  const { db, config } = app;
  subscriber = await startSubscriber({
    now: () => env.currentTimeMs(),
    reply: (request) => (request.index === 0 ? { status: 500, body: 'try again later' } : { status: 200, body: 'thanks' }),
  });

  const { access, refresh } = app.staffTokens();
  const [{ id: campaignId }] = await db('campaigns').insert({ title: 'Wasser für alle' }).returning('id');
  const responses: Response[] = [];
  const call = async (method: string, path: string, authorization: string, body?: unknown, headers: Record<string, string> = {}) => {
    const response = await app.send(method, path, body, { authorization, ...headers });
    responses.push(response);
    return response;
  };

  // Basic auth (staff), with the endpoint's password and signing secret in the body.
  const endpoint = await call('PUT', '/admin/api/webhook-endpoint', basicAuth(STAFF.username, STAFF.password), {
    url: subscriber.url,
    active: true,
    payload_version: 'v2.1',
    events: ['donation.completed'],
    basic_auth_username: 'crm',
    basic_auth_password: ENDPOINT_PASSWORD,
    signing_secret: SIGNING_SECRET,
  });
  expect(endpoint.status).toBe(200);
  expect((await call('GET', '/admin/api/webhook-endpoint', basicAuth(STAFF.username, WRONG_PASSWORD))).status).toBe(401);
  // Bearer token, with a request id offered by the caller.
  const checkout = await call(
    'POST',
    '/platform/checkouts',
    `Bearer ${access}`,
    {
      environment: 'PRODUCTION',
      currency: 'CHF',
      donor: PLATFORM_DONOR,
      positions: [{ amount: 50, campaign_id: campaignId, purpose: 'Brunnenbau' }],
      payment: { transaction_id: `tx-${randomUUID()}`, method: 'VIS', status: 'completed' },
    },
    { 'x-request-id': 'checkout-from-shop-42' },
  );
  expect(checkout.status).toBe(201);
  expect(checkout.headers.get('x-request-id')).toBe('checkout-from-shop-42');
  expect((await call('GET', `/metrics`, `Bearer ${refresh}`)).status).toBe(401);

  const [event] = await db('webhook_events').select('id', 'workflow_id');
  const workflowId = event.workflow_id;
  expect(await relayPendingEvents({ db, client: env.client, taskQueue, log: logs.log })).toBe(1);
  const worker = await createTestWorker({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: await bundleDeliveryWorkflows(),
    db,
    log: logs.log,
    metrics,
    keyring: createKeyring(config.secrets.keys),
  });
  // The first attempt fails, the second (five minutes later, skipped) is delivered.
  expect(await worker.runUntil(env.client.workflow.getHandle(workflowId).result())).toBe('delivered');
  expect((await call('GET', `/admin/api/webhook-events/${event.id}`, `Bearer ${access}`)).status).toBe(200);
  const scrape = await call('GET', '/metrics', `Bearer ${METRICS_TOKEN}`);
  expect(scrape.status).toBe(200);
  const exposition = await scrape.text();

  // The credentials really travelled, so that their absence from the logs means something.
  const [, delivered] = subscriber.requests;
  expect(delivered.headers.authorization).toBe(basicAuth('crm', ENDPOINT_PASSWORD));
  const signature = String(delivered.headers['webhook-signature']);
  expect(signature).toMatch(/^v1,/);

  const text = logs.text();
  const secrets = {
    staffPassword: STAFF.password,
    staffBasic: basicAuth(STAFF.username, STAFF.password).slice('Basic '.length),
    WRONG_PASSWORD,
    wrongBasic: basicAuth(STAFF.username, WRONG_PASSWORD).slice('Basic '.length),
    access,
    refresh,
    ENDPOINT_PASSWORD,
    endpointBasic: basicAuth('crm', ENDPOINT_PASSWORD).slice('Basic '.length),
    SIGNING_SECRET,
    SIGNING_KEY,
    signature: signature.slice('v1,'.length),
    METRICS_TOKEN,
    JWT_SECRET,
  };
  for (const [name, secret] of Object.entries(secrets)) expect([name, text.includes(secret)]).toEqual([name, false]);

  const entries = logs.entries();
  const requestLines = entries.filter((entry) => entry.msg === 'request');
  expect(requestLines.map((entry) => entry.requestId)).toEqual(responses.map((response) => response.headers.get('x-request-id')));
  expect(requestLines.find((entry) => entry.requestId === 'checkout-from-shop-42')).toMatchObject({
    method: 'POST',
    route: '/platform/checkouts',
    status: 201,
  });
  // A new workflow's start is a debug line; each attempt is one info line, written once its status is committed.
  expect(entries.filter((entry) => entry.msg === 'delivery workflow started')).toEqual([
    expect.objectContaining({ level: 20, eventId: event.id, workflowId, start: 'started' }),
  ]);
  expect(entries.filter((entry) => entry.msg === 'webhook delivery attempt')).toEqual([
    expect.objectContaining({
      level: 30,
      eventId: event.id,
      workflowId,
      attempt: 1,
      eventType: 'donation.completed',
      outcome: 'failed',
      responseCode: 500,
      status: 'failed',
      nextAttemptAt: expect.any(String),
    }),
    expect.objectContaining({
      level: 30,
      eventId: event.id,
      workflowId,
      attempt: 2,
      eventType: 'donation.completed',
      outcome: 'delivered',
      responseCode: 200,
      status: 'delivered',
      nextAttemptAt: null,
    }),
  ]);
  // Only an outcome the workflow records after a failed write has a line of its own.
  expect(entries.filter((entry) => entry.msg === 'webhook event status recorded')).toEqual([]);

  // In one process (the all-in-one role), the API's /metrics shows the worker's deliveries too.
  expect(exposition).toContain('webhook_deliveries_total{outcome="failed",event="donation.completed"} 1');
  expect(exposition).toContain('webhook_deliveries_total{outcome="delivered",event="donation.completed"} 1');
  expect(exposition).toContain('webhook_delivery_attempt_duration_seconds_count{outcome="delivered"} 1');
  expect(exposition).toContain('webhook_delivery_attempt_duration_seconds_bucket{le="30",outcome="failed"} 1');
  expect(exposition).toContain('webhook_events{status="delivered"} 1');
  expect(exposition).toContain('webhook_outbox_pending_events 0');
  expect(exposition).toContain('http_request_duration_seconds_count{method="POST",route="/platform/checkouts",status="201"} 1');
}, 60_000);
