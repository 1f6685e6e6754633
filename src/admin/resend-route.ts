import type { Context } from 'koa';
import type { RouteContext } from '../route-context';
import { requestLogger } from '../http/request-log';
import { ApiError, notFound } from '../shared/errors';
import { type HeldResend, resendHeldEvent } from '../temporal/held-resend';
import { reportWorkflowConflict } from '../temporal/workflow-conflicts';
import { findEventDelivery } from '../webhook-events/event-deliveries';

const temporalUnavailable = () =>
  new ApiError('delivery_unavailable', 'The delivery service (Temporal) is not reachable; try again shortly');

const alreadyDelivered = () =>
  new ApiError('already_delivered', 'The event has been delivered; there is nothing to resend');

const notStarted = () =>
  new ApiError('first_attempt_pending', 'The event is queued for delivery; its first attempt follows as soon as the delivery starts');

const workflowConflict = (problem: string) => new ApiError('workflow_id_conflict', problem);

const payloadDropped = () =>
  new ApiError('payload_dropped', 'The event’s payload was dropped after its retention period (PAYLOAD_RETENTION_DAYS); there is nothing to resend');

/**
 * POST /admin/api/webhook-events/<id>/resend: delivers the event again, with the same envelope id, as a manual
 * attempt; 202 once the request is handed to Temporal, which answers it by RESEND_RULE (src/delivery-rules/
 * resend-requests.ts). Refused (409) once the event is delivered, once its payload is dropped, and while its delivery
 * has not started.
 */
export async function resendWebhookEvent(ctx: Context, id: number, context: RouteContext): Promise<void> {
  const { db, temporalClient, metrics } = context;
  const log = requestLogger(ctx, context.log);
  let resend: HeldResend;
  if (!temporalClient) {
    // Without Temporal nothing can be resent; a wrong id is still told apart.
    const event = await findEventDelivery(db, id);
    if (!event) throw notFound('Webhook event not found', 'webhook_event_not_found');
    throw event.status === 'delivered' ? alreadyDelivered() : temporalUnavailable();
  }
  try {
    resend = await resendHeldEvent(db, temporalClient, context.config.temporal.taskQueue, id);
  } catch (err) {
    log.warn({ err, eventId: id }, 'resend could not reach Temporal');
    throw temporalUnavailable();
  }
  switch (resend.kind) {
    case 'not-found':
      throw notFound('Webhook event not found', 'webhook_event_not_found');
    case 'already-delivered':
      throw alreadyDelivered();
    case 'payload-dropped':
      throw payloadDropped();
    case 'not-running':
      // A waiting event without a running workflow: not started yet, or delivered by its first attempt meanwhile.
      throw (await findEventDelivery(db, id))?.status === 'delivered' ? alreadyDelivered() : notStarted();
    case 'workflow-conflict':
      await reportWorkflowConflict({ db, log, metrics }, resend.conflict, 'resend');
      throw workflowConflict(resend.conflict.message);
    case 'accepted': {
      const { workflowId } = resend;
      log.info({ eventId: id, workflowId, requestedBy: ctx.state.user.username }, 'webhook event resend requested');
      ctx.status = 202;
      ctx.body = { id, workflow_id: workflowId };
    }
  }
}
