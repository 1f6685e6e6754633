import { Context } from '@temporalio/activity';
import type { Db } from '../src/db/knex';
import type { RecoveryActivities, RecoveryRequest } from '../src/delivery-rules/activity-contracts';
import { RECOVERY_ANSWER_TIMEOUT_MS, type RecoveryParameters } from '../src/delivery-rules/recovery';
import type { Logger } from '../src/logger';
import { countRecoverableEvents, findOutcomeAfter, listRecoverableEventIds, type RecoveryFilter } from '../src/webhook-events/recoverable-events';
import type { WebhookEventType } from '../src/webhooks/event-types';

/** What became of a resend the recovery asked for: accepted, with the attempts it saw, or skipped and why. */
export type RecoveryResend = { kind: 'accepted'; seenAttempts: number } | { kind: 'skipped'; reason: string };

export interface RecoveryActivityDependencies {
  db: Db;
  log: Logger;
  /**
   * Hands the resend of one event to its delivery workflow, the same way as the admin's "Erneut senden": the worker
   * passes resendForRecovery (src/temporal/held-resend.ts).
   */
  resend: (eventId: number) => Promise<RecoveryResend>;
  /** How often a slot looks whether its event's attempt is recorded. */
  answerPollMs?: number;
}

/** The parameters as the workflow passes them (ISO text) as the store's filter. */
const filterOf = ({ createdFrom, createdTo, eventTypes }: RecoveryParameters): RecoveryFilter => ({
  createdFrom: new Date(createdFrom),
  createdTo: new Date(createdTo),
  // Checked against the known types by the admin API before the recovery started.
  eventTypes: eventTypes as WebhookEventType[],
});

/**
 * The recovery workflow's activities: reading which events to resend, and resending one through the same path as
 * the admin's "Erneut senden", then waiting until its attempt is recorded.
 */
export function createRecoveryActivities({ db, log, resend: resendEvent, answerPollMs = 250 }: RecoveryActivityDependencies): RecoveryActivities {
  return {
    async countRecoverableEvents(parameters) {
      return (await countRecoverableEvents(db, filterOf(parameters))).total;
    },

    async listRecoverableEventIds({ afterId, limit, ...parameters }) {
      return listRecoverableEventIds(db, filterOf(parameters), afterId, limit);
    },

    async requestRecoveryResend(eventId): Promise<RecoveryRequest> {
      const resend = await resendEvent(eventId);
      const recovery = Context.current().info.workflowExecution?.workflowId;
      if (resend.kind === 'skipped') {
        log.info({ eventId, recovery, skipped: resend.reason }, 'recovery skipped a webhook event');
        return { kind: 'skipped' };
      }
      log.info({ eventId, recovery, seenAttempts: resend.seenAttempts }, 'recovery requested a resend');
      return { kind: 'requested', seenAttempts: resend.seenAttempts };
    },

    async awaitRecoveryAttempt({ eventId, seenAttempts }) {
      const context = Context.current();
      const deadline = Date.now() + RECOVERY_ANSWER_TIMEOUT_MS;
      for (;;) {
        const outcome = await findOutcomeAfter(db, eventId, seenAttempts);
        if (outcome) return outcome;
        if (Date.now() >= deadline) return 'unconfirmed';
        context.heartbeat();
        await context.sleep(answerPollMs);
      }
    },
  };
}
