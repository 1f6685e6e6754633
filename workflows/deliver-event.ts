import type { DeliveryStatus } from '../src/delivery-rules/delivery-status';
import type { DeliveryOwner } from '../src/delivery-rules/event-identity';
import { Delivery } from './delivery';

export interface DeliverEventInput {
  eventId: number;
  /** Whose event this is (src/delivery-rules/event-identity.ts); absent when an earlier release started the workflow. */
  owner?: DeliveryOwner;
}

/**
 * Delivers one webhook event: up to five scheduled attempts, 5 min / 15 min / 1 h / 4 h apart, plus a manual one
 * for each resend request, every attempt recorded in Postgres; it ends with the event delivered or at max retries
 * reached.
 */
export async function deliverEvent({ eventId, owner }: DeliverEventInput): Promise<DeliveryStatus> {
  const delivery = new Delivery(eventId, { status: 'waiting', attempts: 0, lastManualAttempt: 0 }, owner);
  return delivery.keepToSchedule(1);
}
