import type { Context } from 'koa';
import { z } from 'zod';
import type { RouteContext } from '../route-context';
import { requestLogger } from '../http/request-log';
import { ApiError } from '../shared/errors';
import type { WebhookEventType } from '../webhooks/event-types';
import { recordTestEvent } from '../webhook-events/test-events';
import { eventType } from './admin-inputs';

export const testEventInput = z.strictObject({ event: eventType().meta({ description: 'The event type to send a sample of' }) }).meta({ id: 'TestEventRequest' });

/** POST /admin/api/webhook-endpoint/test-events ("Testereignis senden"). */
export async function sendTestEvent(ctx: Context, event: WebhookEventType, { db, now, log }: RouteContext): Promise<void> {
  const result = await recordTestEvent(db, event, now());
  if (result.kind === 'no-endpoint') throw new ApiError('endpoint_not_configured', 'No webhook endpoint is configured yet: save one first');
  if (result.kind === 'endpoint-inactive') {
    throw new ApiError('endpoint_inactive', 'The webhook endpoint is switched off and receives nothing: switch it on first');
  }
  requestLogger(ctx, log).info({ eventId: result.id, eventType: event, requestedBy: ctx.state.user.username }, 'test event recorded');
  ctx.status = 202;
  ctx.body = { id: result.id, event, payload_version: result.payloadVersion, workflow_id: result.workflowId };
}
