import { type NativeConnection, Worker, type WorkflowBundle } from '@temporalio/worker';
import { type ActivityDependencies, createActivities } from '../../activities';

/** The workflow sources: workflows/index.ts under ts-node/Jest, dist/workflows/index.js when compiled. */
export const deliveryWorkflowsPath = require.resolve('../../workflows');

export interface DeliveryWorkerOptions extends ActivityDependencies {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  /** A bundle made once with bundleWorkflowCode (tests); otherwise the worker bundles deliveryWorkflowsPath. */
  workflowBundle?: WorkflowBundle;
}

/** A worker for the delivery workflows and their activities; run it with `run()` or `runUntil()`. */
export function createDeliveryWorker({
  connection,
  namespace,
  taskQueue,
  workflowBundle,
  ...dependencies
}: DeliveryWorkerOptions): Promise<Worker> {
  return Worker.create({
    connection,
    namespace,
    taskQueue,
    activities: createActivities(dependencies),
    ...(workflowBundle ? { workflowBundle } : { workflowsPath: deliveryWorkflowsPath }),
  });
}
