import { PLATFORM_DONOR } from '../support/platform-donor';
import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { createLogger } from '../../src/logger';
import { createTemporalClient } from '../../src/temporal/client';
import { type OutboxRelay, startOutboxRelay } from '../../src/temporal/outbox-relay';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { startTestApp, type TestApp } from '../support/test-app';
import { createDevServerEnvironment } from '../support/temporal';
import { createTestWorker } from '../support/delivery';

const NAMESPACE = 'default';
const log = createLogger('silent');

let app: TestApp;
let subscriber: Subscriber;
let temporal: TestWorkflowEnvironment;
let client: Client;
let relay: OutboxRelay;
let worker: Worker;

beforeAll(async () => {
  app = await startTestApp();
  subscriber = await startSubscriber({ reply: () => ({ status: 204 }) });
  const port = await freePort();
  temporal = await createDevServerEnvironment({ port });
  const taskQueue = `platform-e2e-${randomUUID()}`;
  client = createTemporalClient({ address: `127.0.0.1:${port}`, namespace: NAMESPACE });
  relay = startOutboxRelay({ db: app.db, client, taskQueue, log });
  worker = await createTestWorker({
    connection: temporal.nativeConnection,
    namespace: NAMESPACE,
    taskQueue,
    db: app.db,
    log,
    keyring: app.keyring,
  });
}, 90_000);

afterAll(async () => {
  await relay?.stop();
  await client?.connection.close();
  await temporal?.teardown();
  await subscriber?.close();
  await app?.close();
});

test('a platform checkout becomes a delivered donation.completed at the subscriber, through the dev server', async () => {
  const [campaign] = await app.db('campaigns').insert({ title: 'Wasser für alle' }).returning('id');
  const endpoint = await app.request('PUT', '/admin/api/webhook-endpoint', {
    url: subscriber.url,
    active: true,
    payload_version: 'v2',
    events: ['donation.completed'],
  });
  expect(endpoint.status).toBe(200);

  const checkout = await app.request('POST', '/platform/checkouts', {
    environment: 'PRODUCTION',
    currency: 'CHF',
    donor: { ...PLATFORM_DONOR, newsletter: false },
    positions: [{ amount: 50, campaign_id: campaign.id, purpose: 'Brunnenbau' }],
    payment: { transaction_id: `e2e-${randomUUID()}`, method: 'TWI', status: 'completed' },
  });
  expect(checkout.status).toBe(201);

  const delivered = await worker.runUntil(
    eventually(
      async () => {
        const [event] = await app.db('webhook_events').where({ status: 'delivered' });
        return event;
      },
      { timeoutMs: 45_000, what: 'the event to be recorded as delivered' },
    ),
  );
  expect(subscriber.requests).toHaveLength(1);
  const envelope = JSON.parse(subscriber.requests[0].body.toString('utf8'));
  expect(envelope).toMatchObject({
    event: 'donation.completed',
    environment: 'prod',
    data: { donation: { id: checkout.body.number, amount: 50, currency: 'CHF', campaign: { id: campaign.id } } },
  });
  expect(envelope.id).toBe(delivered.id);
  expect(delivered).toMatchObject({ event_type: 'donation.completed', attempts: 1, last_response_code: 204 });
}, 90_000);
