import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import type { WorkerDeploymentVersion } from '@temporalio/common';
import { type NativeConnection, Worker, type WorkerOptions, type WorkflowBundle } from '@temporalio/worker';
import { createDeliveryActivities, type DeliveryActivityDependencies } from '../../activities/delivery-activities';
import { createRecoveryActivities } from '../../activities/recovery-activities';
import { createRetentionActivities } from '../../activities/retention-activities';
import type { DeliveryMetrics, RetentionMetrics } from '../observability/metrics';
import { resendForRecovery } from './held-resend';
import { readInstallation } from '../webhook-events/installation';
import { runningDeliveries } from './running-deliveries';
import { workerIdentity } from './task-queue-installations';
import { tracingClientInterceptors, tracingWorkerOptions } from '../tracing';

/** The workflow sources: workflows/index.ts under ts-node/Jest, dist/workflows/index.js when compiled. */
export const deliveryWorkflowsPath = require.resolve('../../workflows');

/**
 * The bundle `npm run build` writes beside the compiled workflows (dist/workflow-bundle.js), so that a worker does
 * not run webpack at every start. Under Jest the workflows are TypeScript sources and there is no such file.
 */
export const prebuiltWorkflowBundlePath = path.join(path.dirname(deliveryWorkflowsPath), '..', 'workflow-bundle.js');

/**
 * The same workflows with the OpenTelemetry workflow interceptors compiled in, for a worker that traces
 * (src/tracing.ts): a second bundle, so that the untraced one stays as it was, and with it the replay of histories.
 */
export const prebuiltTracedWorkflowBundlePath = path.join(path.dirname(deliveryWorkflowsPath), '..', 'workflow-bundle-traced.js');

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
 * slots (default 100) do; both have room for this many. A waiting attempt costs a socket and little memory.
 */
export const CONCURRENT_ATTEMPTS = 100;

/**
 * Workflow task pollers of a delivery worker (the SDK's default is 10, of which a fifth poll the task queue where
 * every new workflow's first task waits). Almost every task of a delivery is such a first task: the workflow ends
 * after one attempt. Too few pollers leave the worker idle under a backlog while tasks wait in Temporal; the number
 * comes from bench/ceiling.ts (BENCHMARKS.md, third-session summary).
 */
export const WORKFLOW_TASK_POLLERS = 50;

/** The SDK's most workflow task polls at once when a PollerBehavior names no maximum. */
const SDK_DEFAULT_MOST_POLLS = { 'simple-maximum': 10, autoscaling: 100 } as const;

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
 * settings to its trivial-workflow ceiling (bench/ceiling/worker.ts), so that both are measured alike.
 */
export function deliveryWorkerSettings(tuning: WorkerTuning = {}): WorkerTuning {
  const pollers = tuning.workflowTaskPollerBehavior ?? { type: 'simple-maximum', maximum: WORKFLOW_TASK_POLLERS };
  const settings: WorkerTuning = {
    maxCachedWorkflows: DEFAULT_MAX_CACHED_WORKFLOWS,
    // A poller holds a workflow task slot while it waits for a task (the SDK's PollerBehavior): without one slot per
    // poller on top, idle pollers would take the slots of attempts.
    maxConcurrentWorkflowTaskExecutions: CONCURRENT_ATTEMPTS + (pollers.maximum ?? SDK_DEFAULT_MOST_POLLS[pollers.type]),
    maxConcurrentLocalActivityExecutions: CONCURRENT_ATTEMPTS,
    workflowTaskPollerBehavior: pollers,
  };
  for (const [name, value] of Object.entries(tuning)) {
    if (value !== undefined) Object.assign(settings, { [name]: value });
  }
  return settings;
}

export interface DeliveryWorkerOptions extends Omit<DeliveryActivityDependencies, 'metrics'> {
  /** Counts delivery attempts and what the retention purge removed. */
  metrics?: DeliveryMetrics & RetentionMetrics;
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** A bundle made once with bundleWorkflowCode (tests); otherwise the prebuilt one, or the worker bundles. */
  workflowBundle?: WorkflowBundle;
  maxCachedWorkflows?: number;
  /** Workflow task pollers; unset: WORKFLOW_TASK_POLLERS. */
  workflowTaskPollers?: number;
  /** For the activities that ask Temporal (retention, bulk recovery); default: a client on `connection`. */
  client?: Client;
  /** Poller and slot settings; `maxCachedWorkflows` and `workflowTaskPollers` above win over the ones in here. */
  tuning?: WorkerTuning;
  /**
   * The Worker Deployment Version this worker serves (src/temporal/worker-deployment.ts): Temporal then routes each
   * workflow to the release it is pinned to, or to the current one. Unset: an unversioned worker, as `npm start` and
   * the tests run it (the time-skipping test server knows no Worker Deployments).
   */
  deployment?: WorkerDeploymentVersion;
  /** The installation the worker names in its identity (src/temporal/task-queue-installations.ts); unset: read from `db`. */
  installation?: string;
}

/** A worker for the delivery workflows and their activities; run it with `run()` or `runUntil()`. */
export async function createDeliveryWorker({
  connection,
  namespace,
  taskQueue,
  workflowBundle,
  maxCachedWorkflows,
  workflowTaskPollers,
  client = new Client({ connection, namespace, interceptors: tracingClientInterceptors() }),
  tuning,
  deployment,
  installation,
  ...dependencies
}: DeliveryWorkerOptions): Promise<Worker> {
  const { db, log } = dependencies;
  const settings = deliveryWorkerSettings({
    ...tuning,
    maxCachedWorkflows: maxCachedWorkflows ?? tuning?.maxCachedWorkflows,
    workflowTaskPollerBehavior:
      workflowTaskPollers === undefined ? tuning?.workflowTaskPollerBehavior : { type: 'simple-maximum', maximum: workflowTaskPollers },
  });
  const { maxCachedWorkflows: cached = 0, maxConcurrentWorkflowTaskExecutions: slots = 0 } = settings;
  if (cached > 0 && cached < slots) {
    // The SDK would quietly cut the slots to the cache, and the pollers, which hold slots, would take the attempts'.
    throw new Error(
      `TEMPORAL_MAX_CACHED_WORKFLOWS is ${cached}, fewer than the worker's ${slots} workflow task slots (${CONCURRENT_ATTEMPTS} attempts ` +
        `and one per workflow task poller): raise it, or lower TEMPORAL_WORKFLOW_TASK_POLLERS`,
    );
  }
  const traced = tracingWorkerOptions();
  const prebuilt = traced ? prebuiltTracedWorkflowBundlePath : prebuiltWorkflowBundlePath;
  const workflows = workflowBundle
    ? { workflowBundle }
    : existsSync(prebuilt)
      ? { workflowBundle: { codePath: prebuilt } }
      : { workflowsPath: deliveryWorkflowsPath };
  // A bundle has its workflow interceptors compiled in already; only one made here needs them named.
  const tracing = traced && {
    sinks: traced.sinks,
    interceptors: { ...traced.interceptors, workflowModules: 'workflowsPath' in workflows ? traced.interceptors?.workflowModules : [] },
  };
  return Worker.create({
    connection,
    namespace,
    taskQueue,
    // Names this database's installation, by which another deployment's start sees this worker on the task queue.
    identity: workerIdentity(installation ?? (await readInstallation(db))),
    activities: {
      ...createDeliveryActivities(dependencies),
      ...createRetentionActivities({ ...dependencies, runningAmong: (events) => runningDeliveries(client, events) }),
      ...createRecoveryActivities({ ...dependencies, resend: (eventId) => resendForRecovery({ db, log }, client, taskQueue, eventId) }),
    },
    ...settings,
    ...workflows,
    ...tracing,
    // Each workflow type declares its own behaviour (workflows/versioning.ts); one that did not stays on its release.
    ...(deployment && { workerDeploymentOptions: { version: deployment, useWorkerVersioning: true, defaultVersioningBehavior: 'PINNED' } }),
  });
}
