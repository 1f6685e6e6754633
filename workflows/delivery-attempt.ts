import { proxyLocalActivities, sleep } from '@temporalio/workflow';
import type { DeliveryActivities } from '../activities';
import type { AttemptKind, DeliveryStatus, FinishedAttempt } from '../src/delivery-rules/delivery-status';
import { delayAfterFailedAttempt } from '../src/delivery-rules/retry-schedule';

// Local activities: an attempt runs inside the workflow task that asked for it, and its result is kept in history
// when that task completes. Against ordinary activities this saves Temporal an activity task, a second workflow task
// and their matching per event: 40 % of the server's CPU per delivery, +37 % deliveries per second on the benchmark
// machine (BENCHMARKS.md, part 1). A worker that dies mid-attempt (kill -9) is noticed by the workflow task timeout
// (10 s, set at start) and the attempt runs again on another worker; attemptDelivery never re-sends an attempt it
// already recorded. Temporal UI shows each attempt as a marker instead of an activity.
const { attemptDelivery, recordAttempt } = proxyLocalActivities<DeliveryActivities>({
  // Room for the 30 s HTTP limit plus reading the event: the upper bound of one activity execution.
  startToCloseTimeout: '2 minutes',
  // No maximumAttempts: an infrastructure error (database down, worker lost) is retried until it passes and never
  // counts as one of the five delivery attempts, which are a workflow-level loop.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/**
 * The workflow time now. Workflow time stands still while a workflow task runs its local activities (it is the time
 * the task started, before the POST); a 1 ms timer ends the task and starts the next one at the present.
 */
export async function presentWorkflowTime(): Promise<number> {
  await sleep(1);
  return Date.now();
}

export interface AttemptSummary {
  status: DeliveryStatus;
  /** Workflow time of the next scheduled attempt, when the event still has one due. */
  retryAtMs: number | null;
}

/**
 * One delivery attempt: POST (activity 1, its outcome kept in history so a failed database write never re-sends),
 * then record it (activity 2). A delivery, the common case, is recorded by activity 1 itself, which saves a
 * workflow task and an activity task per event; activity 2 still records it when that write failed.
 * A failed scheduled attempt fixes the time of the next one from the retry schedule; a manual attempt keeps
 * whatever was scheduled (`pendingRetryAtMs`).
 */
export async function makeAttempt(
  eventId: number,
  attemptNumber: number,
  kind: AttemptKind,
  pendingRetryAtMs: number | null,
): Promise<AttemptSummary> {
  const result = await attemptDelivery({ eventId, attemptNumber, manual: kind.kind === 'manual', attempt: kind });
  let retryAtMs = pendingRetryAtMs;
  if (kind.kind === 'scheduled') {
    const delay = result.outcome === 'failed' ? delayAfterFailedAttempt(kind.number) : undefined;
    retryAtMs = delay === undefined ? null : (await presentWorkflowTime()) + delay;
  }
  const attempt: FinishedAttempt = { ...kind, outcome: result.outcome };
  const status =
    result.recordedStatus ?? (await recordAttempt({ eventId, attemptNumber, attempt, result, nextAttemptAtMs: retryAtMs }));
  return { status, retryAtMs: status === 'failed' ? retryAtMs : null };
}
