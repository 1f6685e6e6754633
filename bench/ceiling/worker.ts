import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { deliveryWorkerSettings, type WorkerTuning } from '../../src/temporal/worker';
import { CEILING_READY_MESSAGE, createCeilingActivities } from './activities';

/**
 * The worker of the trivial-workflow ceiling, a process of its own like the service's worker:
 * `node dist/bench/ceiling/worker.js <temporal address> <task queue> <subscriber url> <tuning JSON>`. It runs with the
 * delivery worker's settings (src/temporal/worker.ts), overridden by the same tuning the service's worker gets.
 */
async function main() {
  const [address, taskQueue, subscriberUrl, tuningJson = '{}'] = process.argv.slice(2);
  if (!address || !taskQueue || !subscriberUrl) throw new Error('usage: worker.js <address> <task queue> <subscriber url> [tuning JSON]');
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const connection = await NativeConnection.connect({ address });
  const worker = await Worker.create({
    connection,
    namespace: 'default',
    taskQueue,
    workflowsPath: require.resolve('./workflow'),
    activities: createCeilingActivities(subscriberUrl),
    ...deliveryWorkerSettings(JSON.parse(tuningJson) as WorkerTuning),
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => worker.shutdown());
  const running = worker.run();
  process.stdout.write(`${CEILING_READY_MESSAGE}\n`);
  await running;
  await connection.close();
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
