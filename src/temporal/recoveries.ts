import { type Client, WorkflowExecutionAlreadyStartedError, type WorkflowHandle, WorkflowNotFoundError } from '@temporalio/client';
import {
  type RecoveryParameters,
  type RecoveryState,
  recoveryDetails,
  recoverySummary,
  recoveryWorkflowId,
} from '../delivery-rules/recovery';
import { recoverDeliveries, recoveryProgressQuery } from '../../workflows';

/** How long the admin API waits for a recovery's progress (a query needs a worker). */
const PROGRESS_DEADLINE_MS = 5_000;

export interface RecoveryRequest extends RecoveryParameters {
  idempotencyKey: string;
  requestedBy: string;
}

/** What the admin API shows of a recovery. */
export interface RecoveryView extends RecoveryParameters {
  idempotencyKey: string;
  workflowId: string;
  status: 'running' | 'completed' | 'failed' | 'cancelled' | 'terminated' | 'timed_out';
  requestedBy: string;
  startedAt: Date;
  closedAt: Date | null;
  /** Null while no worker answers (just started, or workers down), or when it did not complete. */
  progress: RecoveryState | null;
}

/** The request as kept in the workflow's memo, where the admin API reads it back. */
interface RecoveryMemo extends RecoveryParameters {
  requestedBy: string;
}

/** Same range (whatever offset it was written with) and the same set of types. */
const sameParameters = (a: RecoveryParameters, b: RecoveryParameters) =>
  Date.parse(a.createdFrom) === Date.parse(b.createdFrom) &&
  Date.parse(a.createdTo) === Date.parse(b.createdTo) &&
  [...new Set(a.eventTypes)].sort().join() === [...new Set(b.eventTypes)].sort().join();

/**
 * Starts the recovery of a request, once per idempotency key: the workflow id is made from the key, and Temporal
 * refuses a second workflow under an id that ran before (REJECT_DUPLICATE) or runs now (FAIL), however many requests
 * race. `exists`: the key's recovery was started before, with the same parameters; `conflict`: with others.
 */
export async function startRecovery(client: Client, taskQueue: string, request: RecoveryRequest): Promise<'started' | 'exists' | 'conflict'> {
  const { idempotencyKey, requestedBy, ...parameters } = request;
  const memo: RecoveryMemo = { ...parameters, requestedBy };
  try {
    await client.workflow.start(recoverDeliveries, {
      taskQueue,
      workflowId: recoveryWorkflowId(idempotencyKey),
      args: [{ ...parameters, requestedBy }],
      memo: { recovery: memo },
      staticSummary: recoverySummary(parameters),
      staticDetails: recoveryDetails(parameters, requestedBy),
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'FAIL',
    });
    return 'started';
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  const existing = await findRecovery(client, idempotencyKey);
  return existing && sameParameters(existing, parameters) ? 'exists' : 'conflict';
}

/** A completed recovery's result, or a running one's answer to the query; null when neither comes in time. */
async function progressOf(
  client: Client,
  handle: WorkflowHandle<typeof recoverDeliveries>,
  status: RecoveryView['status'],
): Promise<RecoveryState | null> {
  try {
    return await client.connection.withDeadline(Date.now() + PROGRESS_DEADLINE_MS, () =>
      status === 'completed' ? handle.result() : handle.query(recoveryProgressQuery),
    );
  } catch {
    // No worker answered in time, or the recovery did not complete: its progress is unknown, not zero.
    return null;
  }
}

const STATUS_NAMES = {
  RUNNING: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
  CANCELLED: 'cancelled',
  TERMINATED: 'terminated',
  TIMED_OUT: 'timed_out',
} as const satisfies Partial<Record<string, RecoveryView['status']>>;

/**
 * The recovery of an idempotency key, with its progress unless `withProgress` is false (a recovery just started:
 * its progress needs its first workflow task); undefined when there is none.
 */
export async function findRecovery(client: Client, idempotencyKey: string, withProgress = true): Promise<RecoveryView | undefined> {
  const handle = client.workflow.getHandle<typeof recoverDeliveries>(recoveryWorkflowId(idempotencyKey));
  let description;
  try {
    description = await handle.describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
  const memo = description.memo?.recovery as RecoveryMemo | undefined;
  // Not a recovery this service started (a workflow of that id made by hand): not one to show.
  if (description.type !== 'recoverDeliveries' || !memo) return undefined;
  const status = STATUS_NAMES[description.status.name as keyof typeof STATUS_NAMES] ?? 'failed';
  return {
    idempotencyKey,
    workflowId: description.workflowId,
    status,
    createdFrom: memo.createdFrom,
    createdTo: memo.createdTo,
    eventTypes: memo.eventTypes,
    requestedBy: memo.requestedBy,
    startedAt: description.startTime,
    closedAt: description.closeTime ?? null,
    progress: withProgress ? await progressOf(client, handle, status) : null,
  };
}
