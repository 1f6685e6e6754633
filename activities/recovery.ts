import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import type { Db } from '../src/db/knex';
import type { Logger } from '../src/logger';
import {
  RECOVERY_ANSWER_TIMEOUT_MS,
  type RecoveryActivities,
  type RecoveryParameters,
  type RecoveryRequest,
} from '../src/delivery-rules/recovery';
import { resendHeldEvent } from '../src/temporal/held-resend';
import { reportWorkflowConflict } from '../src/temporal/workflow-conflicts';
import { countRecoverableEvents, findOutcomeAfter, listRecoverableEventIds, type RecoveryFilter } from '../src/webhook-events/recoverable-events';
import type { WebhookEventType } from '../src/webhooks/event-types';

export interface RecoveryActivityDependencies {
  db: Db;
  log: Logger;
  /** Hands each resend to its event's delivery workflow. */
  client: Client;
  /** Where delivery workflows run (a resend run after the delivery ended starts there). */
  taskQueue: string;
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
 * the admin's "Erneut senden" (src/temporal/held-resend.ts), then waiting until its attempt is recorded.
 */
export function createRecoveryActivities({ db, log, client, taskQueue, answerPollMs = 250 }: RecoveryActivityDependencies): RecoveryActivities {
  return {
    async countRecoverableEvents(parameters) {
      return (await countRecoverableEvents(db, filterOf(parameters))).total;
    },

    async listRecoverableEventIds({ afterId, limit, ...parameters }) {
      return listRecoverableEventIds(db, filterOf(parameters), afterId, limit);
    },

    async requestRecoveryResend(eventId): Promise<RecoveryRequest> {
      const resend = await resendHeldEvent(db, client, taskQueue, eventId);
      const recovery = Context.current().info.workflowExecution?.workflowId;
      if (resend.kind === 'workflow-conflict') await reportWorkflowConflict({ db, log }, resend.conflict, 'resend');
      if (resend.kind !== 'accepted') {
        log.info({ eventId, recovery, skipped: resend.kind }, 'recovery skipped a webhook event');
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
