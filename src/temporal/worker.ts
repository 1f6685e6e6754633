import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { type NativeConnection, Worker, type WorkerOptions, type WorkflowBundle } from '@temporalio/worker';
import { type ActivityDependencies, createActivities } from '../../activities';
import { createRecoveryActivities } from '../../activities/recovery';
import { createRetentionActivities } from '../../activities/retention';
import type { DeliveryMetrics, RetentionMetrics } from '../observability/metrics';

/** The workflow sources: workflows/index.ts under ts-node/Jest, dist/workflows/index.js when compiled. */
export const deliveryWorkflowsPath = require.resolve('../../workflows');

/**
 * The bundle `npm run build` writes beside the compiled workflows (dist/workflow-bundle.js), so that a worker does
 * not run webpack at every start. Under Jest the workflows are TypeScript sources and there is no such file.
 */
export const prebuiltWorkflowBundlePath = path.join(path.dirname(deliveryWorkflowsPath), '..', 'workflow-bundle.js');

/**
 * How many workflows a worker keeps in memory between their tasks. The SDK's default grows with the heap limit
 * (about 2,300 with Node's 4 GB), at roughly 250 kB each, so that events sleeping in backoff could take a worker
 * past 900 MB (BENCHMARKS.md). Events in flight are few (rate × seconds); a sleeping workflow that was evicted is
 * replayed from its short history when its timer fires.
 */
export const DEFAULT_MAX_CACHED_WORKFLOWS = 250;

/**
 * Delivery attempts a worker makes at once. An attempt is a local activity, which runs inside its workflow task, so
 * the workflow task slots (SDK default 40) bound the attempts waiting for subscribers as much as the local activity
 * slots (default 100) do; both get the same number. A waiting attempt costs a socket and little memory.
 */
export const CONCURRENT_ATTEMPTS = 100;

/**
 * The worker's poller, slot and cache settings (the SDK's options of the same names); unset ones keep our defaults.
 * The number of workflow task pollers is `workflowTaskPollerBehavior`: SDK 1.24 documents `maxConcurrentWorkflowTaskPolls`
 * but never reads it (worker-options.js, addDefaultWorkerOptions), so it is left out here.
 */
export type WorkerTuning = Partial<
  Pick<
    WorkerOptions,
    | 'maxCachedWorkflows'
    | 'maxConcurrentWorkflowTaskExecutions'
    | 'maxConcurrentLocalActivityExecutions'
    | 'nonStickyToStickyPollRatio'
    | 'workflowTaskPollerBehavior'
  >
>;

/**
 * The settings a delivery worker runs with: ours, overridden by whatever `tuning` sets. The benchmark gives the same
 * settings to its trivial-workflow ceiling (bench/ceiling-worker.ts), so that both are measured alike.
 */
export function deliveryWorkerSettings(tuning: WorkerTuning = {}): WorkerTuning {
  const settings: WorkerTuning = {
    maxCachedWorkflows: DEFAULT_MAX_CACHED_WORKFLOWS,
    maxConcurrentWorkflowTaskExecutions: CONCURRENT_ATTEMPTS,
    maxConcurrentLocalActivityExecutions: CONCURRENT_ATTEMPTS,
  };
  for (const [name, value] of Object.entries(tuning)) {
    if (value !== undefined) Object.assign(settings, { [name]: value });
  }
  return settings;
}

export interface DeliveryWorkerOptions extends Omit<ActivityDependencies, 'metrics'> {
  /** Counts delivery attempts and what the retention purge removed. */
  metrics?: DeliveryMetrics & RetentionMetrics;
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** A bundle made once with bundleWorkflowCode (tests); otherwise the prebuilt one, or the worker bundles. */
  workflowBundle?: WorkflowBundle;
  maxCachedWorkflows?: number;
  /** For the activities that ask Temporal (retention, bulk recovery); default: a client on `connection`. */
  client?: Client;
  /** Poller and slot settings; `maxCachedWorkflows` above wins over the one in here. */
  tuning?: WorkerTuning;
}

/** A worker for the delivery workflows and their activities; run it with `run()` or `runUntil()`. */
export function createDeliveryWorker({
  connection,
  namespace,
  taskQueue,
  workflowBundle,
  maxCachedWorkflows,
  client = new Client({ connection, namespace }),
  tuning,
  ...dependencies
}: DeliveryWorkerOptions): Promise<Worker> {
  const workflows = workflowBundle
    ? { workflowBundle }
    : existsSync(prebuiltWorkflowBundlePath)
      ? { workflowBundle: { codePath: prebuiltWorkflowBundlePath } }
      : { workflowsPath: deliveryWorkflowsPath };
  return Worker.create({
    connection,
    namespace,
    taskQueue,
    activities: {
      ...createActivities(dependencies),
      ...createRetentionActivities({ ...dependencies, client }),
      ...createRecoveryActivities({ ...dependencies, client, taskQueue }),
    },
    ...deliveryWorkerSettings({ ...tuning, maxCachedWorkflows: maxCachedWorkflows ?? tuning?.maxCachedWorkflows }),
    ...workflows,
  });
}
