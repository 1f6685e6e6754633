import type { Client } from '@temporalio/client';
import type { RecoveryResend } from '../../activities/recovery-activities';
import type { Db } from '../db/knex';
import { withEventHeldForResend } from '../webhook-events/event-deliveries';
import { DeliveryWorkflowConflict } from './delivery-identity';
import { deliveryQueueOf, requestResend } from './delivery-workflows';
import { type ConflictReporting, reportWorkflowConflict } from './workflow-conflicts';

/** How long a resend may hold its event's row while Temporal takes the request. */
const RESEND_REQUEST_DEADLINE_MS = 10_000;

/**
 * What became of a resend request; `accepted` carries the attempts the request saw (it is answered by a later one)
 * and the workflow that takes it; `workflow-conflict`: another event's workflow holds the event's workflow id, so
 * nothing was requested (the caller reports it once the row is no longer held: src/temporal/workflow-conflicts.ts).
 */
export type HeldResend =
  | { kind: 'accepted'; seenAttempts: number; workflowId: string }
  | { kind: 'not-found' }
  | { kind: 'already-delivered' }
  | { kind: 'payload-dropped' }
  | { kind: 'not-running' }
  | { kind: 'workflow-conflict'; conflict: DeliveryWorkflowConflict };

/**
 * "Resend now" for one event (the admin's button and bulk recovery alike): reads the event with its row held, so that
 * the retention purge can neither delete it nor drop its payload until Temporal has the request (and from then on
 * the purge sees the workflow running), then hands the request to the delivery workflow (src/temporal/
 * delivery-workflows.ts, which owns attempt numbers). Throws when Temporal does not answer in time.
 */
export async function resendHeldEvent(db: Db, client: Client, taskQueue: string, eventId: number): Promise<HeldResend> {
  const queue = await deliveryQueueOf(db, taskQueue);
  return withEventHeldForResend(db, eventId, async (event): Promise<HeldResend> => {
    if (!event) return { kind: 'not-found' };
    if (event.status === 'delivered') return { kind: 'already-delivered' };
    if (event.payloadDropped) return { kind: 'payload-dropped' };
    try {
      const answer = await client.connection.withDeadline(Date.now() + RESEND_REQUEST_DEADLINE_MS, () => requestResend(client, queue, event));
      return answer === 'accepted' ? { kind: 'accepted', seenAttempts: event.attempts, workflowId: event.identity.workflowId } : { kind: 'not-running' };
    } catch (err) {
      if (err instanceof DeliveryWorkflowConflict) return { kind: 'workflow-conflict', conflict: err };
      throw err;
    }
  });
}

/** The resend of one event for a bulk recovery: a workflow id conflict is reported, then skipped like any other reason. */
export async function resendForRecovery(reporting: ConflictReporting, client: Client, taskQueue: string, eventId: number): Promise<RecoveryResend> {
  const resend = await resendHeldEvent(reporting.db, client, taskQueue, eventId);
  if (resend.kind === 'workflow-conflict') await reportWorkflowConflict(reporting, resend.conflict, 'resend');
  return resend.kind === 'accepted' ? { kind: 'accepted', seenAttempts: resend.seenAttempts } : { kind: 'skipped', reason: resend.kind };
}
