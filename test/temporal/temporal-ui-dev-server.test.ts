import { randomUUID } from 'node:crypto';
import type { WorkflowBundle } from '@temporalio/worker';
import type { Db } from '../../src/db/knex';
import { type Reply, startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { deliveryQueueOf, requestResend } from '../../src/temporal/delivery-workflows';
import { findEventDelivery } from '../../src/webhook-events/event-deliveries';
import { createTestDatabase } from '../support/database';
import { bundleDeliveryWorkflows, createTestWorker, startDelivery } from '../support/delivery';
import { eventually } from '../support/eventually';
import { type ConnectedDevServer, startConnectedTestDevServer } from '../support/temporal';
import { eventRow, insertEndpoint, insertEvent, TEST_KEYRING } from '../support/webhook-rows';

// On the dev server `npm start` runs (real time: no attempt here waits for a retry), because listing workflows by
// search attribute is what the time-skipping test server cannot do.

let temporal: ConnectedDevServer;
let workflowBundle: WorkflowBundle;
let db: Db;
let subscriber: Subscriber;
const replies = new Map<number, Reply>();

beforeAll(async () => {
  temporal = await startConnectedTestDevServer();
  workflowBundle = await bundleDeliveryWorkflows();
  ({ db } = await createTestDatabase());
  subscriber = await startSubscriber({
    reply: (request) => replies.get((JSON.parse(request.body.toString('utf8')) as { id: number }).id) ?? { status: 500 },
  });
}, 120_000);

afterAll(async () => {
  await subscriber?.close();
  await db?.destroy();
  await temporal?.close();
});

/** Workflow ids the query lists, once the dev server's visibility store shows `expected` of them. */
async function listed(query: string, expected: number): Promise<string[]> {
  return eventually(
    async () => {
      const ids: string[] = [];
      for await (const workflow of temporal.client.workflow.list({ query })) ids.push(workflow.workflowId);
      return ids.length === expected && ids.sort();
    },
    { what: `${expected} workflows listed by ${query}` },
  );
}

test('Temporal UI lists deliveries by status, attempts, event type and environment', async () => {
  const endpointId = await insertEndpoint(db, { url: subscriber.url });
  const [delivered, inBackoff, exhausted] = [await insertEvent(db, endpointId), await insertEvent(db, endpointId), await insertEvent(db, endpointId)];
  replies.set(delivered.id, { status: 200 });
  replies.set(inBackoff.id, { status: 503 });
  replies.set(exhausted.id, { status: 410 });
  // An event whose five attempts failed before: a resend after that runs (and ends) at max retries reached.
  await db('webhook_events').where({ id: exhausted.id }).update({ status: 'max_retries_reached', attempts: 5 });

  const taskQueue = `ui-${randomUUID()}`;
  const worker = await createTestWorker({ connection: temporal.nativeConnection, taskQueue, workflowBundle, db, keyring: TEST_KEYRING });
  await worker.runUntil(async () => {
    await startDelivery(db, temporal.client, taskQueue, delivered.id);
    await startDelivery(db, temporal.client, taskQueue, inBackoff.id);
    expect(await requestResend(temporal.client, await deliveryQueueOf(db, taskQueue), (await findEventDelivery(db, exhausted.id))!)).toBe('accepted');
    expect(await temporal.client.workflow.getHandle(delivered.workflowId).result()).toBe('delivered');
    expect(await temporal.client.workflow.getHandle(exhausted.workflowId).result()).toBe('max_retries_reached');
    await eventually(async () => (await eventRow(db, inBackoff.id)).status === 'failed', { what: 'the first attempt to fail' });

    const [deliveredId, inBackoffId, exhaustedId] = [delivered, inBackoff, exhausted].map((event) => event.workflowId);
    expect(await listed('WebhookStatus = "max_retries_reached"', 1)).toEqual([exhaustedId]);
    expect(await listed('WebhookStatus = "failed"', 1)).toEqual([inBackoffId]);
    expect(await listed('WebhookStatus = "delivered"', 1)).toEqual([deliveredId]);
    expect(await listed('WebhookAttempts >= 2', 1)).toEqual([exhaustedId]);
    expect(await listed('WebhookEventType = "donation.completed" AND WebhookEnvironment = "prod"', 3)).toEqual(
      [deliveredId, exhaustedId, inBackoffId].sort(),
    );
    expect(await listed('WebhookEnvironment = "test"', 0)).toEqual([]);

    const resendRun = await temporal.client.workflow.getHandle(exhaustedId).describe();
    expect(resendRun.type).toBe('resendEvent');
    expect(await resendRun.staticSummary()).toBe(`Resend: donation.completed #${exhausted.id} → ${new URL(subscriber.url).host}`);
    await temporal.client.workflow.getHandle(inBackoffId).terminate('test done');
  });
});
