import type { DeliveryStatus } from '../src/delivery-rules/delivery-status';
import { Delivery } from './delivery';

export interface ResendEventInput {
  eventId: number;
}

/**
 * Answers resend requests for an event whose delivery workflow has ended: started (with the first request) under
 * the delivery's workflow id, it goes on from what Postgres recorded and makes a manual attempt per request.
 */
export async function resendEvent({ eventId }: ResendEventInput): Promise<DeliveryStatus> {
  const delivery = await Delivery.resume(eventId);
  await delivery.answerResendRequests();
  return delivery.status;
}
