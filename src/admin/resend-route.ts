import type { Context } from 'koa';
import type { RouteContext } from '../http/context';
import { requestLogger } from '../http/request-log';
import { ApiError, notFound } from '../shared/errors';
import type { DeliveryStatus } from '../db/models/webhook';
import { requestResend } from '../temporal/delivery-workflows';

const temporalUnavailable = () =>
  new ApiError('delivery_unavailable', 'The delivery service (Temporal) is not reachable; try again shortly');

const alreadyDelivered = () =>
  new ApiError('already_delivered', 'The event has been delivered; there is nothing to resend');

/**
 * POST /admin/api/webhook-events/<id>/resend: delivers the event now, with the same envelope id, as a manual
 * attempt; 202 once the attempt is handed to Temporal. Refused (409) while the first attempt is still due and once
 * the event is delivered.
 */
export async function resendWebhookEvent(ctx: Context, id: number, context: RouteContext): Promise<void> {
  const readEvent = (): Promise<{ status: DeliveryStatus; attempts: number } | undefined> =>
    context.db('webhook_events').where({ id }).first('status', 'attempts');
  const event = await readEvent();
  if (!event) throw notFound('Webhook event not found', 'webhook_event_not_found');
  if (event.status === 'delivered') throw alreadyDelivered();
  if (event.status === 'waiting') {
    throw new ApiError('first_attempt_pending', 'The first delivery attempt has not been made yet');
  }
  if (!context.temporalClient) throw temporalUnavailable();
  const log = requestLogger(ctx, context.log);
  let resend: Awaited<ReturnType<typeof requestResend>>;
  try {
    // Events are never deleted, so the second read finds the row the first one found.
    resend = await requestResend(context.temporalClient, context.config.temporal.taskQueue, id, async () => (await readEvent())!);
  } catch (err) {
    log.warn({ err, eventId: id }, 'resend could not reach Temporal');
    throw temporalUnavailable();
  }
  if (resend === 'delivered') throw alreadyDelivered();
  const { workflowId } = resend;
  log.info({ eventId: id, workflowId, requestedBy: ctx.state.user.username }, 'webhook event resend requested');
  ctx.status = 202;
  ctx.body = { id, workflow_id: workflowId };
}
