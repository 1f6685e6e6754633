import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../../src/db/knex';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { createTemporalClient } from '../../src/temporal/client';
import type { DevServerHandle } from '../../src/temporal/dev-server';
import { createTestDatabase } from '../support/database';
import { startDelivery } from '../support/delivery';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { startTestDevServer } from '../support/temporal';
import { finished, spawnTypeScript } from '../support/typescript-process';
import { eventRow, insertEndpoint, insertEvent } from '../support/webhook-rows';

// The delivery role as production runs it (its own process: the SDK runtime is one per process), scraped on its
// METRICS_PORT after it delivered an event: our metrics and the Temporal SDK's worker metrics in one answer. The
// event's workflow is started before the role runs, as when every worker is down: its first task waits in the task
// queue, which is what schedule-to-start latency measures (a relay's eager start hands the task over at once).

const MAIN = path.join(__dirname, '..', '..', 'src', 'main.ts');
const METRICS_TOKEN = `metrics-${randomUUID()}`;

let db: Db;
let databaseUrl: string;
let temporal: DevServerHandle;
let subscriber: Subscriber;
let dataDir: string;

beforeAll(async () => {
  ({ db, url: databaseUrl } = await createTestDatabase());
  temporal = await startTestDevServer();
  subscriber = await startSubscriber({ reply: () => ({ status: 200, body: 'received' }) });
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'sdk-metrics-'));
}, 60_000);

afterAll(async () => {
  await subscriber?.close();
  await temporal?.stop();
  await db?.destroy();
  await rm(dataDir, { recursive: true, force: true });
});

/** The value of the one series of `name` whose labels include all of `labels`; undefined when there is none. */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  const line = text
    .split('\n')
    .find((candidate) => candidate.startsWith(`${name}{`) && wanted.every((pair) => candidate.includes(pair)));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test("the delivery role's /metrics serves the Temporal SDK's worker metrics beside ours, behind the same token", async () => {
  const taskQueue = `sdk-metrics-${randomUUID()}`;
  const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));
  const client = createTemporalClient({ address: temporal.address, namespace: 'default' });
  const startedAt = Date.now();
  try {
    await startDelivery(db, client, taskQueue, event.id);
  } finally {
    await client.connection.close();
  }
  const metricsPort = await freePort();
  const child = spawnTypeScript(MAIN, ['delivery'], {
    PATH: process.env.PATH,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: taskQueue,
    METRICS_PORT: String(metricsPort),
    METRICS_TOKEN,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    ALLOW_INSECURE_WEBHOOK_URLS: 'true',
  });
  const exited = finished(child);
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  const scrape = () => fetch(metricsUrl, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((response) => response.text());
  try {
    await eventually(async () => (await eventRow(db, event.id)).status === 'delivered', { timeoutMs: 60_000, what: 'the delivery role to deliver' });
    const waitedSeconds = (Date.now() - startedAt) / 1000;
    // The SDK records the workflow's completion and its last task's latency at different moments: wait for both.
    const text = await eventually(
      async () => {
        const body = await scrape();
        const completed = sample(body, 'temporal_workflow_completed_total', { task_queue: taskQueue }) ?? 0;
        const tasks = sample(body, 'temporal_workflow_task_execution_latency_seconds_count', { task_queue: taskQueue, workflow_type: 'deliverEvent' }) ?? 0;
        return completed >= 1 && tasks >= 1 && body;
      },
      { what: 'the SDK to count the completed workflow and its task' },
    );

    // Ours.
    expect(sample(text, 'webhook_deliveries_total', { outcome: 'delivered', event: 'donation.completed' })).toBe(1);
    // The SDK's, for this worker's task queue and namespace: slots, pollers, the sticky cache, polls, latencies.
    const queue = { namespace: 'default', task_queue: taskQueue };
    expect(sample(text, 'temporal_worker_task_slots_available', { ...queue, worker_type: 'WorkflowWorker' })).toBeGreaterThan(0);
    expect(sample(text, 'temporal_worker_task_slots_used', { ...queue, worker_type: 'WorkflowWorker' })).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'temporal_worker_task_slots_available', { ...queue, worker_type: 'LocalActivityWorker' })).toBeGreaterThan(0);
    expect(sample(text, 'temporal_num_pollers', { ...queue, poller_type: 'workflow_task' })).toBeGreaterThan(0);
    expect(sample(text, 'temporal_sticky_cache_size', queue)).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'temporal_long_request_total', { ...queue, operation: 'PollWorkflowTaskQueue' })).toBeGreaterThan(0);
    expect(sample(text, 'temporal_workflow_task_execution_latency_seconds_count', { ...queue, workflow_type: 'deliverEvent' })).toBeGreaterThanOrEqual(1);
    // The first task waited for the worker to start: seconds, in our finer buckets (src/temporal/sdk-runtime.ts).
    expect(text).toMatch(/^# TYPE temporal_workflow_task_schedule_to_start_latency_seconds histogram$/m);
    expect(sample(text, 'temporal_workflow_task_schedule_to_start_latency_seconds_count', queue)).toBe(1);
    const waited = sample(text, 'temporal_workflow_task_schedule_to_start_latency_seconds_sum', queue) ?? 0;
    expect(waited).toBeGreaterThan(0.1);
    expect(waited).toBeLessThan(waitedSeconds);
    expect(sample(text, 'temporal_workflow_task_schedule_to_start_latency_seconds_bucket', { ...queue, le: '0.025' })).toBe(0);
    // One exposition: no family is declared twice.
    const types = [...text.matchAll(/^# TYPE (\S+) /gm)].map((match) => match[1]);
    expect(types.length).toBe(new Set(types).size);

    const anonymous = await fetch(metricsUrl);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.text()).not.toContain('temporal_');
  } finally {
    child.kill('SIGTERM');
    expect((await exited).stderr).toBe('');
  }
}, 120_000);
