import { defineQuery, makeContinueAsNewFunc, proxyActivities, setCurrentDetails, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  RECOVERY_ANSWER_TIMEOUT_MS,
  RECOVERY_CONCURRENCY,
  RECOVERY_PAGE_SIZE,
  type RecoveryOutcome,
  type RecoveryParameters,
  type RecoveryProgress,
  type RecoveryState,
  recoveryProgressDetails,
  withOutcome,
} from '../src/delivery-rules/recovery';
import type { RecoveryActivities } from '../src/delivery-rules/activity-contracts';

// No limit on retries: a database or Temporal outage delays the recovery; each activity is safe to repeat (a repeated
// resend request that saw the same attempts is answered by one attempt: src/delivery-rules/resend-requests.ts).
const retry = { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute' } as const;
const { countRecoverableEvents, listRecoverableEventIds, requestRecoveryResend } = proxyActivities<RecoveryActivities>({
  startToCloseTimeout: '1 minute',
  retry,
});
const { awaitRecoveryAttempt } = proxyActivities<RecoveryActivities>({
  startToCloseTimeout: RECOVERY_ANSWER_TIMEOUT_MS + 60_000,
  heartbeatTimeout: '30 seconds',
  retry,
});

export interface RecoverDeliveriesInput extends RecoveryParameters {
  requestedBy: string;
  /** Where a recovery stands that continued as new (long recoveries keep their history short). */
  resume?: { progress: RecoveryProgress; afterId: number };
}

/** Where the recovery stands (tab Queries in Temporal UI; the admin page asks it too). */
export const recoveryProgressQuery = defineQuery<RecoveryState>('recoveryProgress');

/** Runs `work` on every item, at most `limit` at a time, in order of the items. */
async function inParallel<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const slot = async () => {
    while (next < items.length) await work(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, slot));
}

/**
 * Resends every event that failed or reached max retries, created in the range, of the types: through the delivery
 * workflow of each event (a signal while it runs, a resend run after it ended), which numbers and records the
 * attempt. At most RECOVERY_CONCURRENCY at a time, each slot until its attempt is recorded.
 */
export async function recoverDeliveries(input: RecoverDeliveriesInput): Promise<RecoveryState> {
  const { createdFrom, createdTo, eventTypes } = input;
  const parameters: RecoveryParameters = { createdFrom, createdTo, eventTypes };
  let progress: RecoveryProgress = input.resume?.progress ?? {
    total: await countRecoverableEvents(parameters),
    delivered: 0,
    failed: 0,
    skipped: 0,
    unconfirmed: 0,
  };
  let afterId = input.resume?.afterId ?? 0;
  let done = false;
  const state = (): RecoveryState => ({ ...progress, done });
  setHandler(recoveryProgressQuery, state);
  setCurrentDetails(recoveryProgressDetails(state()));

  const recover = async (eventId: number) => {
    const request = await requestRecoveryResend(eventId);
    const outcome: RecoveryOutcome =
      request.kind === 'skipped' ? 'skipped' : await awaitRecoveryAttempt({ eventId, seenAttempts: request.seenAttempts });
    progress = withOutcome(progress, outcome);
    setCurrentDetails(recoveryProgressDetails(state()));
  };

  for (;;) {
    const ids = await listRecoverableEventIds({ ...parameters, afterId, limit: RECOVERY_PAGE_SIZE });
    if (ids.length === 0) break;
    await inParallel(ids, RECOVERY_CONCURRENCY, recover);
    afterId = ids[ids.length - 1];
    if (workflowInfo().continueAsNewSuggested) {
      // The memo holds the request the admin API shows; passed on, so that every run of the recovery has it.
      await makeContinueAsNewFunc<typeof recoverDeliveries>({ memo: workflowInfo().memo })({ ...input, resume: { progress, afterId } });
    }
  }
  done = true;
  setCurrentDetails(recoveryProgressDetails(state()));
  return state();
}
