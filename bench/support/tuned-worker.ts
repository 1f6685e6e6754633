import { loadConfig } from '../../src/config';
import { createLogger } from '../../src/logger';
import { createMetrics } from '../../src/observability/metrics';
import { createKeyring } from '../../src/secrets/keyring';
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
 * runs the same code.
 */
async function main() {
  const tuning = JSON.parse(process.argv[2] ?? '{}') as WorkerTuning;
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const lifecycle = new Lifecycle(log);
  lifecycle.exitOnSignals();
  await installTemporalRuntime(log, { exportMetrics: false });
  const db = await connectDatabase(config, log, lifecycle, 'external-required');
  const temporal = await connectTemporal(config, log, lifecycle, 'external-required');
  const connection = await connectNativeTemporal(temporal.connection);
  lifecycle.onStop(() => connection.close());
  const worker = await createDeliveryWorker({
    connection,
    namespace: config.temporal.namespace,
    taskQueue: config.temporal.taskQueue,
    tuning,
    db,
    log,
    metrics: createMetrics({ processMetrics: true }),
    allowPrivateAddresses: urlPolicyFor(config).allowPrivateAddresses,
    keyring: createKeyring(config.secrets.keys),
  });
  const running = worker.run();
  lifecycle.onStop(async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await running.catch(() => undefined);
  });
  log.info({ taskQueue: config.temporal.taskQueue, tuning }, 'delivery worker running');
  await running;
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
