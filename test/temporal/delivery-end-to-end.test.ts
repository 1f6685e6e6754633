import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import pino from 'pino';
import type { Db } from '../../src/db/knex';
import { createTemporalClient } from '../../src/temporal/client';
import { type OutboxRelay, startOutboxRelay } from '../../src/temporal/outbox-relay';
import { createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { attemptRows, eventRow, insertEndpoint, insertEvent, TEST_KEYRING } from '../support/webhook-rows';
import { createDevServerEnvironment } from '../support/temporal';
import { createTestWorker } from '../support/delivery';

const NAMESPACE = 'default';

let db: Db;
let subscriber: Subscriber;
let client: Client | undefined;
let relay: OutboxRelay | undefined;
let temporal: TestWorkflowEnvironment | undefined;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  subscriber = await startSubscriber({ reply: () => ({ status: 200, body: 'received' }) });
});

afterAll(async () => {
  await relay?.stop();
  await client?.connection.close();
  await temporal?.teardown();
  await subscriber?.close();
  await db?.destroy();
});

test('an event committed while Temporal is down is delivered once the dev server is up', async () => {
  const address = `127.0.0.1:${await freePort()}`;
  const taskQueue = `e2e-${randomUUID()}`;
  const relayLog: Array<{ msg: string }> = [];
  let relayFailed: () => void = () => undefined;
  const firstFailure = new Promise<void>((resolve) => (relayFailed = resolve));
  const log = pino({ level: 'warn' }, {
    write(line: string) {
      const entry = JSON.parse(line) as { msg: string };
      relayLog.push(entry);
      if (entry.msg.startsWith('outbox relay could not start')) relayFailed();
    },
  });

  client = createTemporalClient({ address, namespace: NAMESPACE });
  relay = startOutboxRelay({ db, client, taskQueue, log, pollIntervalMs: 100, maxBackoffMs: 500 });
  const event = await insertEvent(
    db,
    await insertEndpoint(db, { url: subscriber.url, basicAuth: { username: 'crm', password: 'e2e-password' } }),
  );

  await firstFailure;
  expect((await eventRow(db, event.id)).workflow_started_at).toBeNull();
  expect(subscriber.requests).toHaveLength(0);

  temporal = await createDevServerEnvironment({ port: Number(address.split(':')[1]) });
  // The worker as production builds it: bundling workflows/index from its path.
  const worker = await createTestWorker({
    connection: temporal.nativeConnection,
    namespace: NAMESPACE,
    taskQueue,
    db,
    keyring: TEST_KEYRING,
  });
  const delivered = await worker.runUntil(
    eventually(
      async () => {
        const row = await eventRow(db, event.id);
        return row.status === 'delivered' && row;
      },
      { timeoutMs: 45_000, what: 'the event to be delivered' },
    ),
  );

  expect(delivered).toMatchObject({ attempts: 1, last_response_code: 200, last_response_body: 'received' });
  expect(delivered.workflow_started_at).toBeInstanceOf(Date);
  expect(subscriber.requests).toHaveLength(1);
  expect(subscriber.requests[0].body.toString('utf8')).toBe(event.payload);
  expect(subscriber.requests[0].headers.authorization).toBe(`Basic ${Buffer.from('crm:e2e-password').toString('base64')}`);
  expect(await attemptRows(db, event.id)).toMatchObject([{ number: 1, manual: false, outcome: 'delivered' }]);
  expect(JSON.stringify(relayLog)).not.toContain('e2e-password');
}, 90_000);
