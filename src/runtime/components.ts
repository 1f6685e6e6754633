import type { Server } from 'node:http';
import type { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { createApp } from '../api/app';
import type { Config } from '../config';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import { createTemporalClient } from '../temporal/client';
import { createDeliveryWorker } from '../temporal/worker';
import { urlPolicyFor } from '../webhooks/endpoint-rules';
import { startOutboxRelay } from '../webhooks/outbox-relay';
import type { Lifecycle } from './lifecycle';

/** The pieces a role is made of; each registers how it stops. */
export interface Runtime {
  config: Config;
  log: Logger;
  lifecycle: Lifecycle;
}

export function startTemporalClient({ config, lifecycle }: Runtime, address: string): Client {
  const client = createTemporalClient({ address, namespace: config.temporal.namespace });
  lifecycle.onStop(() => client.connection.close());
  return client;
}

export async function startApi(
  { config, log, lifecycle }: Runtime,
  db: Db,
  temporalClient: Client | undefined,
): Promise<number> {
  const app = createApp({ db, config, log, temporalClient });
  const server = await new Promise<Server>((resolve, reject) => {
    const listening = app.listen(config.http.port, config.http.host);
    listening.once('listening', () => resolve(listening));
    listening.once('error', reject);
  });
  lifecycle.onStop(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as { port: number }).port;
}

/** The delivery worker; a crash of the worker ends the process so that the supervisor restarts it. */
export async function startWorker({ config, log, lifecycle }: Runtime, db: Db, address: string): Promise<void> {
  const connection = await NativeConnection.connect({ address });
  lifecycle.onStop(() => connection.close());
  const worker = await createDeliveryWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    db,
    log,
    allowPrivateAddresses: urlPolicyFor(config).allowPrivateAddresses,
  });
  const running = worker.run();
  running.catch((err: unknown) => {
    log.fatal({ err }, 'delivery worker stopped');
    void lifecycle.stop().then(() => process.exit(1));
  });
  lifecycle.onStop(async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running.catch(() => undefined);
  });
}

export function startRelay({ config, log, lifecycle }: Runtime, db: Db, client: Client): void {
  const relay = startOutboxRelay({ db, client, taskQueue: config.temporal.taskQueue, log });
  lifecycle.onStop(() => relay.stop());
}
