import type { Client } from '@temporalio/client';
import { Webhook } from 'standardwebhooks';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { relayPendingEvents } from '../../src/temporal/outbox-relay';
import { WEBHOOK_EVENT_TYPES } from '../../src/webhooks/event-types';
import { PAYLOAD_VERSIONS } from '../../src/webhooks/payload-versions';
import { findWebhookSchema } from '../../src/webhooks/schemas/catalogue';
import { recordTestEvent } from '../../src/webhook-events/test-events';
import { documentedResponses } from '../support/documented-responses';
import { eventually } from '../support/eventually';
import type { TestApp } from '../support/test-app';
import { eventRow, insertEvent } from '../support/webhook-rows';
import { type DeliveryTestBed, startDeliveryTestBed } from '../support/delivery';

// "Testereignis senden": a sample event through the outbox, the relay and the delivery workflow to a real subscriber,
// signed and with Basic auth like a real one, and told apart by its environment and the webhook-test header.

const SECRET = `whsec_${Buffer.from('a signing secret of thirty-two bytes!').toString('base64')}`;

let bed: DeliveryTestBed;
let client: Client;
let app: TestApp;
let subscriber: Subscriber;

beforeAll(async () => {
  bed = await startDeliveryTestBed('test-events');
  ({ client, app } = bed);
  subscriber = await startSubscriber({ reply: () => ({ status: 204 }) });
}, 60_000);

afterAll(async () => {
  await bed?.close();
  await subscriber?.close();
});

const sendTest = (event: unknown) => app.request('POST', '/admin/api/webhook-endpoint/test-events', { event });

test('without an endpoint, or with it switched off, nothing is recorded (409)', async () => {
  expect((await sendTest('donation.completed')).body).toMatchObject({ code: 'endpoint_not_configured' });
  expect((await app.request('PUT', '/admin/api/webhook-endpoint', { url: subscriber.url, active: false })).status).toBe(200);
  const inactive = await sendTest('donation.completed');
  expect(inactive.status).toBe(409);
  expect(inactive.body).toMatchObject({ code: 'endpoint_inactive' });
  expect(await app.db('webhook_events').count({ n: '*' })).toEqual([{ n: 0 }]);
});

test('on every payload version, every event type: a sample valid against the published schema, with environment test', async () => {
  for (const version of PAYLOAD_VERSIONS) {
    expect((await app.request('PUT', '/admin/api/webhook-endpoint', { active: true, payload_version: version })).status).toBe(200);
    for (const event of WEBHOOK_EVENT_TYPES) {
      const recorded = await recordTestEvent(app.db, event, new Date('2025-07-15T10:30:00.500Z'));
      if (recorded.kind !== 'created') throw new Error(`not recorded: ${recorded.kind}`);
      const row = await eventRow(app.db, recorded.id);
      const envelope = JSON.parse(row.payload);
      expect([version, event, findWebhookSchema(version, event)!.schema.safeParse(envelope).error?.issues ?? []]).toEqual([version, event, []]);
      expect(Object.keys(envelope)).toEqual(['id', 'event', 'created_at', 'environment', 'data']);
      expect(envelope).toMatchObject({ id: recorded.id, event, created_at: '2025-07-15T10:30:00Z', environment: 'test' });
      expect(row).toMatchObject({ test: true, status: 'waiting', payload_version: version, event_type: event, source_key: `test:${recorded.id}` });
    }
  }
  // Nothing of these is delivered in this test.
  await app.db('webhook_events').delete();
});

test('is delivered like a real event (signed, with Basic auth, the stored bytes), marked by webhook-test: 1; a real one is not', async () => {
  expect(
    (
      await app.request('PUT', '/admin/api/webhook-endpoint', {
        url: subscriber.url,
        active: true,
        payload_version: 'v2.1',
        events: ['donation.completed'],
        basic_auth_username: 'crm',
        basic_auth_password: 'crm-password',
        signing_secret: SECRET,
      })
    ).status,
  ).toBe(200);
  // Any type may be tested, also one the endpoint does not receive.
  const sent = await sendTest('shop_order.completed');
  expect(sent.status).toBe(202);
  expect(sent.body).toEqual({ id: expect.any(Number), event: 'shop_order.completed', payload_version: 'v2.1', workflow_id: expect.any(String) });
  expect(sent.body.workflow_id).toBe((await app.db('webhook_events').where({ id: sent.body.id }).first('workflow_id')).workflow_id);
  expect((await documentedResponses(app.baseUrl)).errors('post', '/admin/api/webhook-endpoint/test-events', 202, sent.body)).toEqual([]);

  // The outbox relay starts its delivery, as for every event.
  const [{ id: endpointId }] = await app.db('webhook_endpoints').select('id');
  const real = await insertEvent(app.db, endpointId);
  expect(await relayPendingEvents({ db: app.db, client, taskQueue: app.config.temporal.taskQueue })).toBe(2);
  const requests = await subscriber.waitForRequests(2);
  const byId = (id: number) => requests.find((request) => JSON.parse(request.body.toString('utf8')).id === id)!;
  const testRequest = byId(sent.body.id);
  const realRequest = byId(real.id);

  const stored = await eventually(async () => {
    const row = await eventRow(app.db, sent.body.id);
    return row.status === 'delivered' && row;
  });
  expect(testRequest.body.toString('utf8')).toBe(stored.payload);
  expect(testRequest.headers['webhook-test']).toBe('1');
  expect(testRequest.headers.authorization).toBe(`Basic ${Buffer.from('crm:crm-password').toString('base64')}`);
  expect(new Webhook(SECRET).verify(testRequest.body.toString('utf8'), testRequest.headers as Record<string, string>)).toMatchObject({
    id: sent.body.id,
    environment: 'test',
    event: 'shop_order.completed',
  });
  expect(testRequest.headers['webhook-id']).toBe(String(sent.body.id));
  expect(realRequest.headers).not.toHaveProperty('webhook-test');
  expect(realRequest.headers.authorization).toBe(testRequest.headers.authorization);

  // Listed among the events, marked as a test.
  const listed = await app.request('GET', '/admin/api/webhook-events');
  expect(listed.body.results.map((event: { id: number; test: boolean }) => [event.id, event.test])).toEqual(
    expect.arrayContaining([
      [sent.body.id, true],
      [real.id, false],
    ]),
  );
});

test('bad requests are 400s; staff only', async () => {
  for (const body of [{}, { event: 'donation.refunded' }, { event: ['donation.completed'] }, { event: 'donation.completed', extra: 1 }]) {
    const response = await app.request('POST', '/admin/api/webhook-endpoint/test-events', body);
    expect([body, response.status, response.body.code]).toEqual([body, 400, 'invalid_body']);
  }
  expect((await app.request('POST', '/admin/api/webhook-endpoint/test-events', { event: 'donation.completed' }, {})).status).toBe(401);
  expect((await app.request('POST', '/admin/api/webhook-endpoint/test-events', { event: 'donation.completed' }, app.nonStaff())).status).toBe(403);
});
