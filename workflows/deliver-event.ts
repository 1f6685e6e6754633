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
export function deliverEvent({ eventId, owner }: DeliverEventInput): Promise<DeliveryStatus> {
  // Not async: an async function returning this promise would make two more, and the SDK records a stack trace for
  // every promise a workflow makes (BENCHMARKS.md, issue 29).
  return new Delivery(eventId, { status: 'waiting', attempts: 0, lastManualAttempt: 0 }, owner).keepToSchedule(1);
}
