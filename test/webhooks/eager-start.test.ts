import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import pino from 'pino';
import type { Db } from '../../src/db/knex';
import { devServerExecutable } from '../../src/temporal/binaries';
import { DEV_SERVER_ARGS } from '../../src/temporal/dev-server';
import { startOutboxRelay } from '../../src/temporal/outbox-relay';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { createTestDatabase } from '../support/database';
import { createTestWorker } from '../support/delivery';
import { eventually } from '../support/eventually';
import { eventRow, insertEndpoint, insertEvent, TEST_KEYRING, workflowIdOf } from '../support/webhook-rows';
// For its Runtime logger set-up (warnings and errors only).
import '../support/temporal';

let db: Db;
let subscriber: Subscriber;
let temporal: TestWorkflowEnvironment;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  subscriber = await startSubscriber({ reply: () => ({ status: 200, body: 'received' }) });
  temporal = await TestWorkflowEnvironment.createLocal({
    server: { executable: devServerExecutable(process.env.TEMPORAL_CLI_PATH), ip: '127.0.0.1', extraArgs: ['--log-level', 'error', ...DEV_SERVER_ARGS] },
  });
}, 60_000);

afterAll(async () => {
  await temporal?.teardown();
  await subscriber?.close();
  await db?.destroy();
});

/** Whether Temporal handed the first workflow task of a delivery back with the start's answer (eager start). */
async function startedEagerly(client: Client, eventId: number) {
  const history = await client.workflow.getHandle(await workflowIdOf(db, eventId)).fetchHistory();
  return history.events?.[0].workflowExecutionStartedEventAttributes?.eagerExecutionAccepted ?? false;
}

async function relayOneEvent(client: Client, taskQueue: string, eagerStart: boolean) {
  const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));
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
  const worker = await createTestWorker({ connection: temporal.nativeConnection, namespace: 'default', taskQueue, db, keyring: TEST_KEYRING });
  const client = new Client({ connection: temporal.nativeConnection, namespace: 'default' });
  await worker.runUntil(async () => {
    const eager = await relayOneEvent(client, taskQueue, true);
    const polled = await relayOneEvent(client, taskQueue, false);
    expect({ eager: await startedEagerly(client, eager), polled: await startedEagerly(client, polled) }).toEqual({ eager: true, polled: false });
  });
}, 60_000);
