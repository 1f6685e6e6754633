import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import type { Db } from '../../src/db/knex';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { createTestDatabase } from './database';
import { createTestWorker } from './delivery';
import { createDevServerEnvironment } from './temporal';
import { TEST_KEYRING } from './webhook-rows';

/** The dev server, a database and a subscriber that takes every delivery: for what the test server cannot show. */
export interface DevServerDeliveryBed {
  /** The dev server through the SDK's test environment (createDevServerEnvironment). */
  temporal: TestWorkflowEnvironment;
  db: Db;
  /** Answers every request 200 "received". */
  subscriber: Subscriber;
  /** A delivery worker on `taskQueue`, and a client on the worker's connection, as the delivery role runs its relay. */
  workerAndClient(taskQueue: string): Promise<{ worker: Worker; client: Client }>;
  close(): Promise<void>;
}

/** Starts the dev server (`serverOptions` as createDevServerEnvironment's), a database and the subscriber. */
export async function startDevServerDeliveryBed(serverOptions: Parameters<typeof createDevServerEnvironment>[0] = {}): Promise<DevServerDeliveryBed> {
  const { db } = await createTestDatabase();
  // What started before a failure is stopped: the caller gets no bed to close.
  const undo = (...stops: Array<() => Promise<unknown>>) => async (err: unknown) => {
    for (const stop of stops) await stop();
    throw err;
  };
  const subscriber = await startSubscriber({ reply: () => ({ status: 200, body: 'received' }) }).catch(undo(() => db.destroy()));
  const temporal = await createDevServerEnvironment(serverOptions).catch(undo(() => subscriber.close(), () => db.destroy()));
  return {
    temporal,
    db,
    subscriber,
    async workerAndClient(taskQueue) {
      const worker = await createTestWorker({ connection: temporal.nativeConnection, taskQueue, db, keyring: TEST_KEYRING });
      return { worker, client: new Client({ connection: temporal.nativeConnection, namespace: 'default' }) };
    },
    async close() {
      await temporal.teardown();
      await subscriber.close();
      await db.destroy();
    },
  };
}
