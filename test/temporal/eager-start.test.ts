import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import pino from 'pino';
import { startOutboxRelay } from '../../src/temporal/outbox-relay';
import { type DevServerDeliveryBed, startDevServerDeliveryBed } from '../support/dev-server-delivery';
import { eventually } from '../support/eventually';
import { eventRow, insertEndpoint, insertEvent, workflowIdOf } from '../support/webhook-rows';

let bed: DevServerDeliveryBed;

beforeAll(async () => {
  bed = await startDevServerDeliveryBed();
}, 60_000);

afterAll(async () => {
  await bed?.close();
});

/** Whether Temporal handed the first workflow task of a delivery back with the start's answer (eager start). */
async function startedEagerly(client: Client, eventId: number) {
  const history = await client.workflow.getHandle(await workflowIdOf(bed.db, eventId)).fetchHistory();
  return history.events?.[0].workflowExecutionStartedEventAttributes?.eagerExecutionAccepted ?? false;
}

async function relayOneEvent(client: Client, taskQueue: string, eagerStart: boolean) {
  const { db } = bed;
  const event = await insertEvent(db, await insertEndpoint(db, { url: bed.subscriber.url }));
  const relay = startOutboxRelay({ db, client, taskQueue, log: pino({ level: 'silent' }), eagerStart });
  try {
    await eventually(async () => (await eventRow(db, event.id)).status === 'delivered', { timeoutMs: 20_000, what: 'the event delivered' });
  } finally {
    await relay.stop();
  }
  return event.id;
}

test('a relay on the worker\'s connection starts deliveries eagerly, and only when asked', async () => {
  const taskQueue = `eager-${randomUUID()}`;
  const { worker, client } = await bed.workerAndClient(taskQueue);
  await worker.runUntil(async () => {
    const eager = await relayOneEvent(client, taskQueue, true);
    const polled = await relayOneEvent(client, taskQueue, false);
    expect({ eager: await startedEagerly(client, eager), polled: await startedEagerly(client, polled) }).toEqual({ eager: true, polled: false });
  });
}, 60_000);
