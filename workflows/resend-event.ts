import type { DeliveryStatus } from '../src/delivery-rules/delivery-status';
import { makeAttempt } from './delivery-attempt';

export interface ResendEventInput {
  eventId: number;
  /** The attempt row this resend writes; part of the workflow id, so one request cannot send twice. */
  attemptNumber: number;
}

/** Makes one manual, recorded delivery attempt for an event whose delivery workflow has already ended. */
export async function resendEvent({ eventId, attemptNumber }: ResendEventInput): Promise<DeliveryStatus> {
  const { status } = await makeAttempt(eventId, attemptNumber, { kind: 'manual' }, null);
  return status;
}
