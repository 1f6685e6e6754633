import type { DeliveryStatus } from '../src/delivery-rules/delivery-status';
import type { DeliveryOwner } from '../src/delivery-rules/event-identity';
import { Delivery } from './delivery';

export interface ResumeDeliveryInput {
  eventId: number;
  /** Whose event this is (src/delivery-rules/event-identity.ts); absent when an earlier release started the workflow. */
  owner?: DeliveryOwner;
}

/**
 * Goes on with the delivery of an event whose workflow Temporal lost (its state deleted, or restored from an older
 * backup), from what Postgres recorded: the attempt numbers continue from the attempts made, the schedule from the
 * scheduled attempts made (two failed → the next is scheduled attempt 3), at the time the next one was due. Started
 * by the healing sweep (src/temporal/delivery-sweep.ts) under the event's workflow id.
 */
export async function resumeDelivery({ eventId, owner }: ResumeDeliveryInput): Promise<DeliveryStatus> {
  const { delivery, scheduledAttempts, retryInMs } = await Delivery.resumeSchedule(eventId, owner);
  if (delivery.status === 'failed' && retryInMs !== null && retryInMs > 0) await delivery.waitForScheduledAttempt(retryInMs);
  return delivery.keepToSchedule(scheduledAttempts + 1);
}
