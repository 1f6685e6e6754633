import { Client } from '@temporalio/client';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { createDb } from '../../src/db/knex';
import { connectNativeTemporal } from '../../src/temporal/connection';
import { temporalConnection } from '../../src/temporal/connection-settings';
import { watchCurrentVersion } from '../../src/temporal/worker-deployment';
import { createLogger } from '../../src/logger';
import { deliveryWorkerSettings, type WorkerTuning } from '../../src/temporal/worker';
import { CEILING_READY_MESSAGE, createCeilingActivities } from './activities';
import { type CeilingTemporal, ceilingStarter, type EnvelopeTemplate, relayFromOutbox, type StartOptions, type StartRequest } from './starts';

/**
 * The trivial-workflow ceiling in one process, as the service's `delivery` role runs relay and worker:
 * `node dist/bench/ceiling/worker.js <temporal JSON> <task queue> <subscriber url> <tuning JSON> <template JSON>
 * <start options JSON>`, started with an IPC channel over which the bench asks for one workflow start per event. The
 * Temporal JSON is `{"address", "tls"?}`, `tls` with the settings' files (TemporalTlsSettings, as TEMPORAL_TLS_* name
 * them). The worker runs with the delivery worker's settings (src/temporal/worker.ts), overridden by the same tuning
 * the service's worker gets.
 */
async function main() {
  const [temporalJson, taskQueue, subscriberUrl, tuningJson, templateJson, startOptionsJson] = process.argv.slice(2);
  if (!temporalJson || !taskQueue || !subscriberUrl || !tuningJson || !templateJson || !startOptionsJson || !process.send) {
    throw new Error('usage (with an IPC channel): worker.js <temporal JSON> <task queue> <subscriber url> <tuning JSON> <template JSON> <start options JSON>');
  }
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const { address, tls } = JSON.parse(temporalJson) as CeilingTemporal;
  const connection = await connectNativeTemporal(temporalConnection(address, { tls }).options);
  const startOptions = JSON.parse(startOptionsJson) as StartOptions;
  const outbox = startOptions.outboxDatabaseUrl ? createDb({ connectionString: startOptions.outboxDatabaseUrl }) : undefined;
  // Named as the service names its deployment: after the task queue.
  const deployment = startOptions.versioned ? { deploymentName: taskQueue, buildId: 'bench-floor' } : undefined;
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue,
    workflowsPath: require.resolve('./workflow'),
    activities: createCeilingActivities(subscriberUrl, outbox),
    ...deliveryWorkerSettings(JSON.parse(tuningJson) as WorkerTuning),
    ...(deployment && { workerDeploymentOptions: { version: deployment, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' } }),
  });
  const client = new Client({ connection, namespace: 'default' });
  const watch = deployment ? watchCurrentVersion(client, deployment, createLogger('warn', 'bench-floor')) : undefined;
  const eager = () => startOptions.eager && (watch?.isCurrent() ?? true);
  const stopRelay = outbox ? await relayFromOutbox(client, taskQueue, outbox, eager) : undefined;
  const start = ceilingStarter(client, taskQueue, JSON.parse(templateJson) as EnvelopeTemplate, new URL(subscriberUrl).host, startOptions);
  process.on('message', (request: StartRequest) => void start(request).then((answer) => process.send?.(answer)));
  // The channel must not keep the process alive once the worker has shut down.
  process.channel?.unref();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
  const running = worker.run();
  process.stdout.write(`${CEILING_READY_MESSAGE}\n`);
  await running;
  await stopRelay?.();
  watch?.stop();
  await outbox?.destroy();
  await connection.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
