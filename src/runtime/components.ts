import { Client } from '@temporalio/client';
import type Koa from 'koa';
import type { Config } from '../config';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import type { Metrics } from '../observability/metrics';
import { createApp, createMetricsApp } from './app';
import { createHttpServer, type RequestTimeouts } from '../http/http-server';
import { closeGracefully } from '../http/graceful-close';
import { createKeyring } from '../secrets/keyring';
import { createTemporalClient } from '../temporal/client';
import { connectNativeTemporal } from '../temporal/connection';
import type { TemporalConnectionOptions } from '../temporal/connection-settings';
import type { TemporalSdkMetrics } from '../temporal/sdk-runtime';
import { advanceEventIdsPastTemporal } from '../temporal/event-id-floor';
import { refuseTaskQueueOfAnotherInstallation } from '../temporal/task-queue-installations';
import { createDeliveryWorker } from '../temporal/worker';
import { deliveryWorkerDeployment, watchCurrentVersion } from '../temporal/worker-deployment';
import { ensureRetentionSchedule } from '../temporal/retention-schedule';
import { urlPolicyFor } from '../webhooks/subscriber-url';
import { startOutboxRelay } from '../temporal/outbox-relay';
import type { Lifecycle } from './lifecycle';
import { tracingClientInterceptors } from '../tracing';

/** The pieces a role is made of; each registers how it stops. */
export interface Runtime {
  config: Config;
  log: Logger;
  lifecycle: Lifecycle;
  /** One registry per process: in the all-in-one role the API's /metrics also shows the worker's deliveries. */
  metrics: Metrics;
  /** The Temporal SDK's worker metrics, in the roles that run a worker and serve /metrics (src/temporal/sdk-runtime.ts). */
  temporalSdkMetrics?: TemporalSdkMetrics;
}

export function startTemporalClient({ config, lifecycle }: Runtime, connection: TemporalConnectionOptions): Client {
  const client = createTemporalClient({ ...connection, namespace: config.temporal.namespace });
  lifecycle.onStop(() => client.connection.close());
  return client;
}

/**
 * Before events are written after a start (the `migrate` job, the all-in-one start): moves the event id sequence past
 * the ids of the namespace's delivery workflows, so that a new, re-created or restored database never hands out an id
 * a subscriber already has (src/temporal/event-id-floor.ts).
 */
export async function checkEventIds(runtime: Runtime, db: Db, connection: TemporalConnectionOptions): Promise<void> {
  const client = createTemporalClient({ ...connection, namespace: runtime.config.temporal.namespace });
  try {
    await advanceEventIdsPastTemporal({ db, client, log: runtime.log, metrics: runtime.metrics });
  } finally {
    await client.connection.close();
  }
}

/**
 * Refuses to start workflows on, or poll, a task queue that a worker of another installation (another database)
 * polls (src/temporal/task-queue-installations.ts).
 */
export async function refuseSharedTaskQueue({ config, log }: Runtime, db: Db, client: Client): Promise<void> {
  await refuseTaskQueueOfAnotherInstallation({ db, client, taskQueue: config.temporal.taskQueue, log });
}

/** Listens on `host:port` until the lifecycle stops, then closes as src/http/graceful-close.ts says; answers the port. */
export async function serve(app: Koa, { port, host, timeouts }: { port: number; host: string; timeouts: RequestTimeouts }, lifecycle: Lifecycle): Promise<number> {
  const server = createHttpServer(app, timeouts).listen(port, host);
  const close = closeGracefully(server);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', () => resolve());
    server.once('error', reject);
  });
  lifecycle.onStop(close);
  return (server.address() as { port: number }).port;
}

export function startApi({ config, log, lifecycle, metrics, temporalSdkMetrics }: Runtime, db: Db, temporalClient: Client | undefined): Promise<number> {
  return serve(createApp({ db, config, log, temporalClient, metrics, temporalSdkMetrics }), config.http, lifecycle);
}

/**
 * For the roles without an API (worker, relay): serves /metrics on METRICS_PORT when it is set. Returns the port,
 * or undefined when no listener was asked for.
 */
export async function startMetricsListener({ config, log, lifecycle, metrics, temporalSdkMetrics }: Runtime, db: Db): Promise<number | undefined> {
  if (config.metrics.port === undefined) return undefined;
  const app = createMetricsApp({ db, config, log, metrics, temporalSdkMetrics });
  return serve(app, { ...config.http, port: config.metrics.port }, lifecycle);
}

/** A running delivery worker: a client on its connection, and whether starts through it should be eager. */
export interface StartedWorker {
  client: Client;
  /** Eager starts hand the first task to this worker: only while its version is current (or it is unversioned). */
  startsEagerly: () => boolean;
}

/**
 * The delivery worker, and the nightly retention schedule it runs the purge for; a crash of the worker ends the
 * process so that the supervisor restarts it. `versioned`: a Worker Deployment Version of its release (the
 * production roles); `npm start` runs unversioned, one process and one release at a time. Returns a client on the
 * worker's NativeConnection, with which workflow starts from this process may be eager (startRelay).
 */
export async function startWorker(
  { config, log, lifecycle, metrics }: Runtime,
  db: Db,
  temporal: TemporalConnectionOptions,
  { versioned }: { versioned: boolean },
): Promise<StartedWorker> {
  const connection = await connectNativeTemporal(temporal);
  lifecycle.onStop(() => connection.close());
  const client = new Client({ connection, namespace: config.temporal.namespace, interceptors: tracingClientInterceptors() });
  await refuseSharedTaskQueue({ config, log, lifecycle, metrics }, db, client);
  const deployment = versioned ? deliveryWorkerDeployment(config.temporal.taskQueue, config.temporal.buildId) : undefined;
  const worker = await createDeliveryWorker({
    connection,
    client,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    maxCachedWorkflows: config.temporal.maxCachedWorkflows,
    workflowTaskPollers: config.temporal.workflowTaskPollers,
    db,
    log,
    metrics,
    allowPrivateAddresses: urlPolicyFor(config).allowPrivateAddresses,
    keyring: createKeyring(config.secrets.keys),
    sendTraceparent: config.webhooks.sendTraceparent,
    deployment,
  });
  const retention = { eventRetentionDays: config.retention.eventDays, payloadRetentionDays: config.retention.payloadDays };
  try {
    const schedule = await ensureRetentionSchedule(client, config.temporal.taskQueue, retention);
    log.info({ schedule, ...retention }, 'retention schedule ready');
  } catch (err) {
    // Housekeeping must not stop deliveries; the next worker start tries again.
    log.error({ err }, 'retention schedule could not be created or updated; ended events are not purged');
  }
  const running = worker.run();
  running.catch((err: unknown) => {
    log.fatal({ err }, 'delivery worker stopped');
    void lifecycle.stop().then(() => process.exit(1));
  });
  lifecycle.onStop(async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running.catch(() => undefined);
  });
  if (!deployment) return { client, startsEagerly: () => true };
  log.info(deployment, 'delivery worker serves this worker deployment version');
  const watch = watchCurrentVersion(client, deployment, log);
  lifecycle.onStop(async () => watch.stop());
  return { client, startsEagerly: watch.isCurrent };
}

/**
 * `eagerStart` only with the client startWorker returned: it needs the worker's NativeConnection. Such a relay leads
 * only while its starts are eager, that is while its worker's version is current (docs/delivery.md#the-path-of-an-event:
 * one relay leads).
 */
export function startRelay({ config, log, lifecycle, metrics }: Runtime, db: Db, client: Client, { eagerStart }: { eagerStart?: () => boolean } = {}): void {
  const relay = startOutboxRelay({ db, client, taskQueue: config.temporal.taskQueue, log, eagerStart: eagerStart ?? false, mayLead: eagerStart, metrics });
  lifecycle.onStop(() => relay.stop());
}
