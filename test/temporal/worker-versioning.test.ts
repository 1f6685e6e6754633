import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { NativeConnection, type Worker, type WorkflowBundle } from '@temporalio/worker';
import type { Db } from '../../src/db/knex';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { createLogger } from '../../src/logger';
import { deliveryQueueOf, requestResend } from '../../src/temporal/delivery-workflows';
import { startOutboxRelay } from '../../src/temporal/outbox-relay';
import type { DevServerHandle } from '../../src/temporal/dev-server';
import { type CurrentVersionWatch, deliveryWorkerDeployment, watchCurrentVersion } from '../../src/temporal/worker-deployment';
import { findEventDelivery } from '../../src/webhook-events/event-deliveries';
import * as workflows from '../../workflows';
import { createTestDatabase } from '../support/database';
import { bundleDeliveryWorkflows, createTestWorker, startDelivery } from '../support/delivery';
import { eventually } from '../support/eventually';
import { RETRIES_END_WITH_THE_CONNECTION, startTestDevServer } from '../support/temporal';
import { eventRow, insertEndpoint, insertEvent, TEST_KEYRING, workflowIdOf } from '../support/webhook-rows';

// Worker Versioning on the dev server `npm start` runs (the time-skipping test server has no Worker Deployments):
// a delivery stays on the release it started on after a newer one became current; one started by an unversioned
// worker (release 0.1.0) moves to the first versioned release; a deployment's first version makes itself current,
// a later one does not. docs/delivery.md#releases-and-running-workflows.

const { VersioningBehavior } = temporal.api.enums.v1;

let server: DevServerHandle;
let connection: Connection;
let nativeConnection: NativeConnection;
let client: Client;
let db: Db;
let workflowBundle: WorkflowBundle;
let subscriber: Subscriber;
let endpointId: number;
const log = createLogger('silent');
const workers: Worker[] = [];
const running: Array<Promise<void>> = [];
const watches: CurrentVersionWatch[] = [];

beforeAll(async () => {
  server = await startTestDevServer();
  connection = await Connection.connect({ address: server.address, plugins: [RETRIES_END_WITH_THE_CONNECTION] });
  nativeConnection = await NativeConnection.connect({ address: server.address });
  client = new Client({ connection });
  ({ db } = await createTestDatabase());
  workflowBundle = await bundleDeliveryWorkflows();
  // Each event's first request fails (the delivery sleeps in backoff, 5 minutes); every later one is delivered.
  const seen = new Set<number>();
  subscriber = await startSubscriber({
    reply: (request) => {
      const { id } = JSON.parse(request.body.toString('utf8')) as { id: number };
      const first = !seen.has(id);
      seen.add(id);
      return { status: first ? 503 : 200 };
    },
  });
  endpointId = await insertEndpoint(db, { url: subscriber.url });
}, 120_000);

afterEach(async () => {
  for (const watch of watches.splice(0)) watch.stop();
  for (const worker of workers.splice(0)) if (worker.getState() === 'RUNNING') worker.shutdown();
  await Promise.all(running.splice(0));
});

afterAll(async () => {
  // In the reverse order of beforeAll.
  const closes = [() => subscriber?.close(), () => db?.destroy(), () => nativeConnection?.close(), () => connection?.close(), () => server?.stop()];
  for (const close of closes) await close();
});

async function startWorker(taskQueue: string, deployment?: WorkerDeploymentVersion): Promise<Worker> {
  const worker = await createTestWorker({ connection: nativeConnection, taskQueue, workflowBundle, db, keyring: TEST_KEYRING, deployment });
  workers.push(worker);
  running.push(worker.run());
  return worker;
}

function watch(deployment: WorkerDeploymentVersion, logger = log): CurrentVersionWatch {
  const watching = watchCurrentVersion(client, deployment, logger);
  watches.push(watching);
  return watching;
}

const versionOf = async (eventId: number) => {
  const { raw } = await client.workflow.getHandle(await workflowIdOf(db, eventId)).describe();
  const info = raw.workflowExecutionInfo?.versioningInfo;
  return { buildId: info?.deploymentVersion?.buildId ?? 'unversioned', behavior: info?.behavior ? VersioningBehavior[info.behavior] : undefined };
};

/** An event whose delivery started and whose first attempt failed: it sleeps in its 5-minute backoff. */
async function sleepingDelivery(taskQueue: string): Promise<number> {
  const { id } = await insertEvent(db, endpointId);
  await startDelivery(db, client, taskQueue, id);
  // Its backoff timer in history: the workflow task that made the attempt has completed (Postgres knows earlier).
  const handle = client.workflow.getHandle(await workflowIdOf(db, id));
  await eventually(async () => (await handle.fetchHistory()).events?.some((event) => event.timerStartedEventAttributes), { what: `event ${id} in backoff` });
  expect(await eventRow(db, id)).toMatchObject({ status: 'failed', attempts: 1 });
  return id;
}

/** Wakes the sleeping delivery with a resend: its next workflow task runs where Temporal routes it. */
async function resendAndFinish(taskQueue: string, eventId: number) {
  expect(await requestResend(client, await deliveryQueueOf(db, taskQueue), (await findEventDelivery(db, eventId))!)).toBe('accepted');
  expect(await client.workflow.getHandle(await workflowIdOf(db, eventId)).result()).toBe('delivered');
}

async function makeCurrent({ deploymentName, buildId }: WorkerDeploymentVersion) {
  // As `temporal worker deployment set-current-version` does; refused until the version's workers have polled.
  await eventually(
    async () => {
      try {
        const { conflictToken } = await client.workflowService.describeWorkerDeployment({ namespace: 'default', deploymentName });
        await client.workflowService.setWorkerDeploymentCurrentVersion({ namespace: 'default', deploymentName, buildId, conflictToken, identity: 'test' });
        return true;
      } catch {
        return false;
      }
    },
    { what: `${buildId} to be made current` },
  );
  // Temporal hands the change to the task queue a moment later; a workflow started before it arrived starts on the
  // previous version, where it stays (the drill deploy counts those).
  await eventually(
    async () => {
      const { versioningInfo } = await client.workflowService.describeTaskQueue({
        namespace: 'default',
        taskQueue: { name: deploymentName },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      return versioningInfo?.currentDeploymentVersion?.buildId === buildId;
    },
    { what: `the task queue to route to ${buildId}` },
  );
}

test('every workflow type declares how it moves between releases', () => {
  const types = Object.entries(workflows).filter(([, value]) => typeof value === 'function');
  expect(Object.keys(workflows.VERSIONING_BEHAVIOURS).sort()).toEqual(types.map(([name]) => name).sort());
  // Declared when a run starts on a worker (a versioned one only): checked on the server below.
  for (const [, fn] of types) expect(typeof (fn as { workflowDefinitionOptions?: unknown }).workflowDefinitionOptions).toBe('function');
});

test('the first version of a deployment makes itself current; a later one waits to be made current', async () => {
  const taskQueue = `versioning-${randomUUID()}`;
  const a = deliveryWorkerDeployment(taskQueue, 'release-a');
  const b = deliveryWorkerDeployment(taskQueue, 'release-b');
  await startWorker(taskQueue, a);
  const watchA = watch(a);
  await eventually(async () => watchA.isCurrent(), { what: 'release A to become current' });
  await startWorker(taskQueue, b);
  const logLines: Array<{ level: number; msg: string; currentBuildId?: string }> = [];
  const watchB = watch(b, createLogger('info', 'test', { write: (line: string) => logLines.push(JSON.parse(line)) }));
  await eventually(async () => (await client.workflowService.describeWorkerDeployment({ namespace: 'default', deploymentName: taskQueue })).workerDeploymentInfo?.versionSummaries?.length === 2, {
    what: 'release B to poll',
  });
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  // B's relay does not start workflows eagerly (they would run on B): Temporal routes them to A, the current one.
  expect([watchA.isCurrent(), watchB.isCurrent()]).toEqual([true, false]);
  // Its log says so from its first look, once, naming the version that is current.
  expect(logLines.map(({ level, msg, currentBuildId }) => ({ level, msg: msg.split(':')[0], currentBuildId }))).toEqual([
    { level: 40, msg: 'this worker version is not current', currentBuildId: 'release-a' },
  ]);

  await makeCurrent(b);
  await eventually(async () => watchB.isCurrent() && !watchA.isCurrent(), { what: 'B current, A not' });
  expect(logLines.at(-1)).toMatchObject({ level: 30, msg: 'this worker version is current' });
});

test('a delivery sleeping on release A finishes on A after B became current; a new one runs on B', async () => {
  const taskQueue = `versioning-${randomUUID()}`;
  const { b } = await releaseACurrent(taskQueue);
  const onA = await sleepingDelivery(taskQueue);
  expect(await versionOf(onA)).toEqual({ buildId: 'release-a', behavior: 'VERSIONING_BEHAVIOR_PINNED' });

  await startWorker(taskQueue, b);
  await makeCurrent(b);
  await resendAndFinish(taskQueue, onA);
  expect(await versionOf(onA)).toEqual({ buildId: 'release-a', behavior: 'VERSIONING_BEHAVIOR_PINNED' });

  const onB = await sleepingDelivery(taskQueue);
  expect(await versionOf(onB)).toEqual({ buildId: 'release-b', behavior: 'VERSIONING_BEHAVIOR_PINNED' });

  // A recovery and a purge move to whichever release is current (Auto-Upgrade).
  const recovery = await client.workflow.start(workflows.recoverDeliveries, {
    taskQueue,
    workflowId: `recovery-${randomUUID()}`,
    args: [{ createdFrom: '2025-07-15T08:00:00Z', createdTo: '2025-07-15T09:00:00Z', eventTypes: ['donation.completed'], requestedBy: 'test' }],
  });
  const purge = await client.workflow.start(workflows.purgeEndedEvents, {
    taskQueue,
    workflowId: `purge-${randomUUID()}`,
    args: [{ eventRetentionDays: 36_500, payloadRetentionDays: 36_500 }],
  });
  for (const handle of [recovery, purge]) {
    await handle.result();
    expect(VersioningBehavior[(await handle.describe()).raw.workflowExecutionInfo?.versioningInfo?.behavior ?? 0]).toBe('VERSIONING_BEHAVIOR_AUTO_UPGRADE');
  }
});

test('a delivery started by an unversioned worker (release 0.1.0) moves to the first versioned release', async () => {
  const taskQueue = `versioning-${randomUUID()}`;
  const unversioned = await startWorker(taskQueue);
  const sleeping = await sleepingDelivery(taskQueue);
  expect(await versionOf(sleeping)).toEqual({ buildId: 'unversioned', behavior: undefined });

  const first = deliveryWorkerDeployment(taskQueue, 'first-versioned');
  await startWorker(taskQueue, first);
  const watching = watch(first);
  await eventually(async () => watching.isCurrent(), { what: 'the first versioned release to make itself current' });
  unversioned.shutdown();
  // It replays 0.1.0's history on the new code (what test/temporal/replay.test.ts checks), and stays there.
  await resendAndFinish(taskQueue, sleeping);
  expect(await versionOf(sleeping)).toEqual({ buildId: 'first-versioned', behavior: 'VERSIONING_BEHAVIOR_PINNED' });
});

test('a release that is not current starts no delivery eagerly: it would run there, not on the current one', async () => {
  const taskQueue = `versioning-${randomUUID()}`;
  const { b } = await releaseACurrent(taskQueue);
  // B's worker and relay share a connection of their own, as in a `delivery` process of release B.
  const connectionB = await NativeConnection.connect({ address: server.address });
  try {
    const workerB = await createTestWorker({ connection: connectionB, taskQueue, workflowBundle, db, keyring: TEST_KEYRING, deployment: b });
    workers.push(workerB);
    running.push(workerB.run());
    const clientB = new Client({ connection: connectionB });
    const watchB = watch(b);
    const relayed = async (eagerStart: boolean | (() => boolean)) => {
      const { id } = await insertEvent(db, endpointId);
      const relay = startOutboxRelay({ db, client: clientB, taskQueue, log, eagerStart });
      await eventually(async () => (await eventRow(db, id)).attempts === 1, { what: `event ${id} attempted` });
      await relay.stop();
      await eventually(async () => (await versionOf(id)).buildId !== 'unversioned', { what: `event ${id}'s first task completed` });
      const [started] = (await client.workflow.getHandle(await workflowIdOf(db, id)).fetchHistory()).events ?? [];
      return { ...(await versionOf(id)), eager: started.workflowExecutionStartedEventAttributes?.eagerExecutionAccepted ?? false };
    };
    await eventually(async () => (await client.workflowService.describeWorkerDeployment({ namespace: 'default', deploymentName: taskQueue })).workerDeploymentInfo?.versionSummaries?.length === 2, {
      what: 'release B to poll',
    });
    // Asked for anyway, an eager start runs on B while A is current: why B's relay asks only once B is current.
    expect(await relayed(true)).toMatchObject({ buildId: 'release-b', eager: true });
    expect(await relayed(watchB.isCurrent)).toMatchObject({ buildId: 'release-a', eager: false });
    await makeCurrent(b);
    await eventually(async () => watchB.isCurrent(), { what: 'B to see itself current' });
    expect(await relayed(watchB.isCurrent)).toMatchObject({ buildId: 'release-b', eager: true });
  } finally {
    for (const worker of workers.splice(0)) if (worker.getState() === 'RUNNING') worker.shutdown();
    await Promise.all(running.splice(0));
    await connectionB.close();
  }
});

/** Release A's worker on the task queue, current (its deployment's first version); release B's version, not started. */
async function releaseACurrent(taskQueue: string) {
  const a = deliveryWorkerDeployment(taskQueue, 'release-a');
  await startWorker(taskQueue, a);
  watch(a);
  await eventually(async () => (await versionOfDeployment(taskQueue)) === 'release-a', { what: 'release A to become current' });
  return { a, b: deliveryWorkerDeployment(taskQueue, 'release-b') };
}

async function versionOfDeployment(deploymentName: string) {
  const described = await client.workflowService.describeWorkerDeployment({ namespace: 'default', deploymentName }).catch(() => undefined);
  return described?.workerDeploymentInfo?.routingConfig?.currentDeploymentVersion?.buildId;
}
