import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { type NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import type { Db } from '../../src/db/knex';
import { type ReceivedRequest, startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { createLogger } from '../../src/logger';
import { createMetrics } from '../../src/observability/metrics';
import { deliveryWorkerDeployment } from '../../src/temporal/worker-deployment';
import { deliveryQueueOf, startDeliveryWorkflow } from '../../src/temporal/delivery-workflows';
import {
  foreignPollers,
  LIVE_POLLER_MS,
  refuseTaskQueueOfAnotherInstallation,
  TaskQueueOfAnotherInstallation,
} from '../../src/temporal/task-queue-installations';
import { findEventDelivery } from '../../src/webhook-events/event-deliveries';
import { readInstallation } from '../../src/webhook-events/installation';
import { testDatabases } from '../support/database';
import { bundleDeliveryWorkflows, createTestWorker } from '../support/delivery';
import { eventually } from '../support/eventually';
import { captureLogs } from '../support/log-capture';
import { type ConnectedDevServer, startConnectedTestDevServer } from '../support/temporal';
import { eventRow, insertEndpoint, insertEvent, TEST_KEYRING } from '../support/webhook-rows';

/*
 * Two deployments (two databases) on one namespace and task queue: a worker runs every workflow of the queue against
 * its own database (issue 20, P2). The second start is refused; a workflow of the other database that reaches a worker
 * all the same (both started at the same moment) is neither sent nor recorded nor ended.
 */

const log = createLogger('silent');
let temporal: ConnectedDevServer;
let client: Client;
let connection: NativeConnection;
let workflowBundle: WorkflowBundle;
const databases = testDatabases();
const subscribers: Subscriber[] = [];
const running = new Set<Worker>();

beforeAll(async () => {
  temporal = await startConnectedTestDevServer();
  ({ client, nativeConnection: connection } = temporal);
  workflowBundle = await bundleDeliveryWorkflows();
}, 120_000);

afterAll(async () => {
  for (const worker of running) if (worker.getState() === 'RUNNING') worker.shutdown();
  await Promise.all(subscribers.map((subscriber) => subscriber.close()));
  await databases.destroyAll();
  await temporal?.close();
});

const newDatabase = databases.create;

async function subscriberFor(reply: (request: ReceivedRequest) => { status: number } = () => ({ status: 200 })) {
  const subscriber = await startSubscriber({ reply });
  subscribers.push(subscriber);
  return subscriber;
}

/** Runs a worker until the test ends it; answers once Temporal lists it among the queue's pollers. */
async function polling(worker: Worker, taskQueue: string, identity: string) {
  running.add(worker);
  const run = worker.run();
  await eventually(
    async () => {
      const { pollers } = await client.workflowService.describeTaskQueue({ namespace: 'default', taskQueue: { name: taskQueue, kind: 1 }, taskQueueType: 1 });
      return pollers?.some((poller) => poller.identity === identity);
    },
    { what: `${identity} polling ${taskQueue}` },
  );
  return async () => {
    worker.shutdown();
    await run;
    running.delete(worker);
  };
}

const deliveryWorker = async (db: Db, taskQueue: string, options: Partial<Parameters<typeof createTestWorker>[0]> = {}) => {
  const worker = await createTestWorker({ connection, taskQueue, workflowBundle, db, keyring: TEST_KEYRING, ...options });
  return polling(worker, taskQueue, worker.options.identity);
};

describe('the second deployment on a task queue is refused at start', () => {
  test('with a clear message naming TEMPORAL_TASK_QUEUE and the other installation; its own installation is not refused', async () => {
    const [first, second] = [await newDatabase(), await newDatabase()];
    const taskQueue = `shared-${randomUUID()}`;
    const stop = await deliveryWorker(first, taskQueue);
    const refusal = refuseTaskQueueOfAnotherInstallation({ db: second, client, taskQueue, log, graceMs: 0 });
    await expect(refusal).rejects.toThrow(TaskQueueOfAnotherInstallation);
    await expect(refuseTaskQueueOfAnotherInstallation({ db: second, client, taskQueue, log, graceMs: 0 })).rejects.toThrow(
      new RegExp(`TEMPORAL_TASK_QUEUE ${taskQueue} is polled by a worker of another installation \\(another database\\): ${await readInstallation(first)}`),
    );
    // A second replica of the first deployment (same database) starts.
    await refuseTaskQueueOfAnotherInstallation({ db: first, client, taskQueue, log, graceMs: 0 });
    // Another task queue is another deployment's own.
    await refuseTaskQueueOfAnotherInstallation({ db: second, client, taskQueue: `${taskQueue}-staging`, log, graceMs: 0 });
    await stop();
    // A stopped worker stays listed for minutes; once its last poll is older than a live worker's can be, it is gone.
    expect(await foreignPollers(client, taskQueue, await readInstallation(second), Date.now() + LIVE_POLLER_MS)).toEqual([]);
  }, 60_000);

  test('a versioned worker (Worker Deployments, as production runs them) is seen as well', async () => {
    const [first, second] = [await newDatabase(), await newDatabase()];
    const taskQueue = `versioned-${randomUUID()}`;
    const stop = await deliveryWorker(first, taskQueue, { deployment: deliveryWorkerDeployment(taskQueue, 'build-1') });
    await expect(refuseTaskQueueOfAnotherInstallation({ db: second, client, taskQueue, log, graceMs: 0 })).rejects.toThrow(TaskQueueOfAnotherInstallation);
    await stop();
  }, 60_000);

  test("a worker naming no installation (release 0.1.0's, in a rolling deploy) is not taken as another installation's", async () => {
    const db = await newDatabase();
    const taskQueue = `rolling-${randomUUID()}`;
    const identity = `4242@previous-release-host`;
    const stop = await polling(await Worker.create({ connection, taskQueue, workflowBundle, identity, activities: {} }), taskQueue, identity);
    await refuseTaskQueueOfAnotherInstallation({ db, client, taskQueue, log, graceMs: 0 });
    await stop();
  }, 60_000);
});

test("a workflow of database B reaching database A's worker is neither sent nor recorded nor completed", async () => {
  const [a, b] = [await newDatabase(), await newDatabase()];
  const [subscriberA, subscriberB] = [await subscriberFor(), await subscriberFor()];
  const eventA = await insertEvent(a, await insertEndpoint(a, { url: subscriberA.url }));
  const eventB = await insertEvent(b, await insertEndpoint(b, { url: subscriberB.url }));
  expect(eventB.id).toBe(eventA.id);
  const taskQueue = `raced-${randomUUID()}`;
  const logs = captureLogs();
  const metrics = createMetrics();
  const stopA = await deliveryWorker(a, taskQueue, { metrics, log: logs.log });

  // B's relay started at the same moment as A's worker (neither saw the other): its workflow lands on A's worker.
  await startDeliveryWorkflow(client, await deliveryQueueOf(b, taskQueue), (await findEventDelivery(b, eventB.id))!);
  // Until A's worker did something with it: refused it, or (without the check) sent and recorded A's event of that id.
  const refused = async () => (await metrics.registry.getSingleMetricAsString('webhook_foreign_delivery_workflows_total')).endsWith(' 1');
  await eventually(async () => (await refused()) || subscriberA.requests.length > 0 || (await eventRow(a, eventA.id)).attempts > 0, {
    what: "A's worker handling B's workflow",
  });
  expect(await refused()).toBe(true);
  expect(logs.entries()).toContainEqual(
    expect.objectContaining({ level: 50, msg: expect.stringContaining(`belongs to installation ${await readInstallation(b)}, not to this one`) }),
  );
  expect(subscriberA.requests).toHaveLength(0);
  expect(subscriberB.requests).toHaveLength(0);
  expect(await eventRow(a, eventA.id)).toMatchObject({ status: 'waiting', attempts: 0 });
  expect(await eventRow(b, eventB.id)).toMatchObject({ status: 'waiting', attempts: 0 });
  const handle = client.workflow.getHandle(eventB.workflowId);
  expect((await handle.describe()).status.name).toBe('RUNNING');

  // Still waiting for its own installation's worker (retried with backoff); ended here only to end the test.
  await handle.terminate('test done');
  await stopA();
  expect(await eventRow(b, eventB.id)).toMatchObject({ status: 'waiting', attempts: 0 });
}, 60_000);
