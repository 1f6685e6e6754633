import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import pino from 'pino';
import { relayPendingEvents, startOutboxRelay } from '../../src/temporal/outbox-relay';
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

test("an event started eagerly is marked started by its first attempt, and the relay's pass writes nothing to it", async () => {
  const { db } = bed;
  const taskQueue = `eager-${randomUUID()}`;
  const { worker } = await bed.workerAndClient(taskQueue);
  const endpointId = await insertEndpoint(db, { url: bed.subscriber.url });
  /** Holds the event's row locked from the start on (after the claim), until `release`: whoever marks it waits. */
  const lockedFromStart = (eventId: number) => {
    const lock = db.transaction();
    const client = new Client({
      connection: bed.temporal.nativeConnection,
      namespace: 'default',
      interceptors: {
        workflow: [
          {
            startWithDetails: async (input, next) => {
              await (await lock).raw('SELECT id FROM webhook_events WHERE id = ? FOR UPDATE', [eventId]);
              return next(input);
            },
          },
        ],
      },
    });
    return { client, release: async () => (await lock).commit() };
  };
  const waitingForTheRow = (statement: string) =>
    eventually(
      async () =>
        (await db.raw(`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE ?`, [statement]))
          .rows[0].n === 1,
      { what: `${statement} to wait for the row` },
    );
  const log = pino({ level: 'silent' });

  await worker.runUntil(async () => {
    const eager = await insertEvent(db, endpointId);
    const eagerly = lockedFromStart(eager.id);
    // The pass ends while the row is locked: it wrote nothing to it. The attempt that the eager start ran waits for the
    // row (its start's foreign key, and its mark); once it has it, it marks the event.
    expect(await relayPendingEvents({ db, client: eagerly.client, taskQueue, eagerStart: true, log })).toBe(1);
    await waitingForTheRow('WITH found AS (%');
    await eagerly.release();
    await eventually(async () => (await eventRow(db, eager.id)).status === 'delivered', { what: 'the eager event delivered' });
    expect((await eventRow(db, eager.id)).workflow_started_at).toBeInstanceOf(Date);

    // Started the usual way (another worker may run it, perhaps of the previous release): the pass writes the mark too,
    // so it waits for the row.
    const polled = await insertEvent(db, endpointId);
    const usually = lockedFromStart(polled.id);
    const pass = relayPendingEvents({ db, client: usually.client, taskQueue, eagerStart: false, log });
    await waitingForTheRow('UPDATE webhook_events SET%workflow_started_at = CASE%');
    await usually.release();
    expect(await pass).toBe(1);
    await eventually(async () => (await eventRow(db, polled.id)).status === 'delivered', { what: 'the polled event delivered' });
    expect({ eager: await startedEagerly(bed.temporal.client, eager.id), polled: await startedEagerly(bed.temporal.client, polled.id) }).toEqual({ eager: true, polled: false });
  });
}, 60_000);
