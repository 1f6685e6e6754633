import type { DeliveryStatus } from '../src/delivery-rules/delivery-status';
import { delayAfterFailedAttempt } from '../src/delivery-rules/retry-schedule';
import { Delivery } from './delivery';

export interface DeliverEventInput {
  eventId: number;
}

/**
 * Delivers one webhook event: up to five scheduled attempts, 5 min / 15 min / 1 h / 4 h apart, plus a manual one
 * for each resend request, every attempt recorded in Postgres; it ends with the event delivered or at max retries
 * reached.
 */
export async function deliverEvent({ eventId }: DeliverEventInput): Promise<DeliveryStatus> {
  const delivery = new Delivery(eventId, { status: 'waiting', attempts: 0, lastManualAttempt: 0 });
  for (let scheduled = 1; delivery.status === 'waiting' || delivery.status === 'failed'; scheduled++) {
    const retryInMs = await delivery.attempt({ kind: 'scheduled', number: scheduled }, delayAfterFailedAttempt(scheduled) ?? null);
    if (delivery.status === 'failed' && retryInMs !== null) await delivery.waitForScheduledAttempt(retryInMs);
  }
  // A request that came in while the fifth attempt ran is answered here, not lost with the ending workflow.
  await delivery.answerResendRequests();
  return delivery.status;
}
