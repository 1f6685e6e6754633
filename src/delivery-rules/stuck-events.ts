import type { DeliveryStatus } from './delivery-status';

/**
 * Stuck events: deliveries that should have moved on and have not. Errors that can pass by themselves (Postgres or
 * the network down, no worker, Temporal unreachable) are retried without using up an attempt, so such an event shows
 * nothing new; after DELIVERY_STUCK_AFTER_MINUTES it is shown as stuck (admin API and page, the metric
 * webhook_events_stuck and its alert). Not a fifth status: the spec has four, and a stuck event is still one of them.
 */

/** What the rule reads of an event. */
export interface StuckFacts {
  status: DeliveryStatus;
  attempts: number;
  createdAt: Date;
  /** When its delivery workflow was started (marked by the relay, or by the first attempt of one started eagerly); null while not. */
  workflowStartedAt: Date | null;
  /** While failed with a scheduled attempt due: when it is due. */
  nextAttemptAt: Date | null;
}

/**
 * Since when the event has been due to move on: a waiting event without an attempt since its workflow started (since
 * it was created, while the relay has not started one), a failed one since its next attempt fell due. Null for an
 * event that waits for nothing: delivered, at max retries reached, or failed with no attempt scheduled.
 */
export function dueSince({ status, attempts, createdAt, workflowStartedAt, nextAttemptAt }: StuckFacts): Date | null {
  if (status === 'waiting' && attempts === 0) return workflowStartedAt ?? createdAt;
  if (status === 'failed') return nextAttemptAt;
  return null;
}

/** Events due since before this instant are stuck. */
export function stuckCutoff(now: Date, stuckAfterMinutes: number): Date {
  return new Date(now.getTime() - stuckAfterMinutes * 60_000);
}

/** Whether the event has been due to move on for more than `stuckAfterMinutes` at `now`. */
export function isStuck(facts: StuckFacts, now: Date, stuckAfterMinutes: number): boolean {
  const since = dueSince(facts);
  return since !== null && since < stuckCutoff(now, stuckAfterMinutes);
}
