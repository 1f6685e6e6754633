import { Client } from '@temporalio/client';
import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { createMetrics } from '../../src/observability/metrics';
import { createKeyring } from '../../src/secrets/keyring';
import { type Runtime, startMetricsListener, startRelay } from '../../src/runtime/components';
import { connectDatabase, connectTemporal } from '../../src/runtime/infrastructure';
import { Lifecycle } from '../../src/runtime/lifecycle';
import { connectNativeTemporal } from '../../src/temporal/connection';
import { installTemporalRuntime } from '../../src/temporal/sdk-runtime';
import { createDeliveryWorker, type WorkerTuning } from '../../src/temporal/worker';
import { urlPolicyFor } from '../../src/webhooks/subscriber-url';

/**
 * The service's worker role (`node dist/src/main.js worker`, src/runtime/components.ts startWorker) with poller and
 * slot settings given as JSON in argv[2], which the production roles take from no configuration yet. The benchmark
 * starts the worker this way whenever it compares settings, the defaults (`{}`) included, so that every variant
 * runs the same code. With `delivery` as argv[3] it is the `delivery` role instead: the relay too, starting its
 * workflows eagerly on the worker's connection, and /metrics on METRICS_PORT.
 */
async function main() {
  const tuning = JSON.parse(process.argv[2] ?? '{}') as WorkerTuning;
  const withRelay = process.argv[3] === 'delivery';
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const lifecycle = new Lifecycle(log);
  lifecycle.exitOnSignals();
  await installTemporalRuntime(log, { exportMetrics: false });
  const runtime: Runtime = { config, log, lifecycle, metrics: createMetrics({ processMetrics: true }) };
  const db = await connectDatabase(config, log, lifecycle, 'external-required');
  const temporal = await connectTemporal(config, log, lifecycle, 'external-required');
  const connection = await connectNativeTemporal(temporal.connection);
  lifecycle.onStop(() => connection.close());
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const worker = await createDeliveryWorker({
    connection,
    client,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    tuning,
    db,
    log,
    metrics: runtime.metrics,
    allowPrivateAddresses: urlPolicyFor(config).allowPrivateAddresses,
    keyring: createKeyring(config.secrets.keys),
  });
  const running = worker.run();
  lifecycle.onStop(async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running.catch(() => undefined);
  });
  if (withRelay) {
    startRelay(runtime, db, client, { eagerStart: () => true });
    await startMetricsListener(runtime, db);
  }
  log.info({ taskQueue: config.temporal.taskQueue, tuning, withRelay }, 'delivery worker running');
  await running;
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
