import { randomUUID } from 'node:crypto';
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, type Worker, type WorkflowBundle } from '@temporalio/worker';
import type { Db } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { deliveryQueueOf, startDeliveryWorkflow } from '../../src/temporal/delivery-workflows';
import { createDeliveryWorker, type DeliveryWorkerOptions, deliveryWorkflowsPath } from '../../src/temporal/worker';
import { findEventDelivery } from '../../src/webhook-events/event-deliveries';
import { createTimeSkippingEnvironment } from './temporal';
import { startTestApp, type TestApp } from './test-app';
import { spawnTypeScript } from './typescript-process';

/** Starts an event's delivery workflow as the relay would, with what the event says about itself. */
export async function startDelivery(db: Db, client: Client, taskQueue: string, eventId: number) {
  const delivery = await findEventDelivery(db, eventId);
  if (!delivery) throw new Error(`no webhook event ${eventId}`);
  return startDeliveryWorkflow(client, await deliveryQueueOf(db, taskQueue), delivery);
}

/** The delivery workflows, bundled for a test file: webpack takes a second or two, so once per file, not per worker. */
export function bundleDeliveryWorkflows(): Promise<WorkflowBundle> {
  return bundleWorkflowCode({ workflowsPath: deliveryWorkflowsPath, logger: new DefaultLogger('WARN') });
}

/**
 * A delivery worker as the tests run it: namespace `default`, silent logs, subscribers on loopback allowed;
 * everything else as createDeliveryWorker makes it in production.
 */
export function createTestWorker(
  options: Pick<DeliveryWorkerOptions, 'connection' | 'taskQueue' | 'db' | 'keyring'> & Partial<DeliveryWorkerOptions>,
): Promise<Worker> {
  return createDeliveryWorker({ namespace: 'default', log: createLogger('silent'), allowPrivateAddresses: true, ...options });
}

/** The app handing deliveries to Temporal, and a delivery worker on a task queue of their own. */
export interface DeliveryTestBed {
  /** A time-skipping test server: the workflows' timers pass as soon as nothing else is waiting. */
  env: TestWorkflowEnvironment;
  /** The app's Temporal client. */
  client: Client;
  app: TestApp;
  taskQueue: string;
  /** Stops the worker (after its running tasks), then the app and the test server. */
  close(): Promise<void>;
}

/**
 * Starts a test server, the app (configured by `env`, as startTestApp) with a Temporal client on a task queue named
 * after the test file, and a delivery worker on that queue. The app's client does not skip time (backoffs stay where
 * they are) unless `clientSkipsTime`.
 */
export async function startDeliveryTestBed(
  name: string,
  { env: appEnv = {}, clientSkipsTime = false }: { env?: NodeJS.ProcessEnv; clientSkipsTime?: boolean } = {},
): Promise<DeliveryTestBed> {
  const env = await createTimeSkippingEnvironment();
  let app: TestApp | undefined;
  try {
    const client = clientSkipsTime ? env.client : new Client({ connection: env.connection });
    const taskQueue = `${name}-${randomUUID()}`;
    const started = await startTestApp({ ...appEnv, TEMPORAL_TASK_QUEUE: taskQueue }, { temporalClient: client });
    app = started;
    const { db, keyring } = started;
    const worker = await createTestWorker({ connection: env.nativeConnection, taskQueue, workflowBundle: await bundleDeliveryWorkflows(), db, keyring });
    const working = worker.run();
    return {
      env,
      client,
      app: started,
      taskQueue,
      async close() {
        worker.shutdown();
        await working;
        await started.close();
        await env.teardown();
      },
    };
  } catch (err) {
    await app?.close();
    await env.teardown();
    throw err;
  }
}

/**
 * The production `worker` role (src/main.ts) as a process of its own, on `taskQueue` of the bed's Temporal, against
 * its database (or `databaseUrl`): for a worker a test kills. The caller kills it at the end.
 */
export function spawnWorkerProcess(bed: DeliveryTestBed, taskQueue: string, databaseUrl = bed.app.databaseUrl): ChildProcess {
  return spawnTypeScript(path.join(__dirname, '..', '..', 'src', 'main.ts'), ['worker'], {
    PATH: process.env.PATH,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: bed.env.address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    SECRETS_KEYS: bed.app.config.secrets.keys.map(({ key }) => key.toString('hex')).join(','),
    ALLOW_INSECURE_WEBHOOK_URLS: 'true',
    // The time-skipping server has no Worker Deployments: an unversioned worker, explicitly.
    TEMPORAL_WORKER_VERSIONING: 'false',
    LOG_LEVEL: 'error',
  });
}
