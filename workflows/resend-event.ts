import type { DeliveryStatus } from '../src/delivery-rules/delivery-status';
import type { DeliveryOwner } from '../src/delivery-rules/event-identity';
import { Delivery } from './delivery';

export interface ResendEventInput {
  eventId: number;
  /** Whose event this is (src/delivery-rules/event-identity.ts); absent when an earlier release started the workflow. */
  owner?: DeliveryOwner;
}

/**
 * Answers resend requests for an event whose delivery workflow has ended: started (with the first request) under
 * the delivery's workflow id, it goes on from what Postgres recorded and makes a manual attempt per request.
 */
export async function resendEvent({ eventId, owner }: ResendEventInput): Promise<DeliveryStatus> {
  const delivery = await Delivery.resume(eventId, owner);
  await delivery.answerResendRequests();
  return delivery.status;
}
