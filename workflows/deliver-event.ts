import { condition, defineSignal, setHandler } from '@temporalio/workflow';
import type { DeliveryStatus } from '../src/delivery-rules/delivery-status';
import { makeAttempt, presentWorkflowTime } from './delivery-attempt';

/** "Resend now": one manual attempt as soon as no other attempt runs, unless the event is delivered by then. */
export const deliverNowSignal = defineSignal('deliverNow');

export interface DeliverEventInput {
  eventId: number;
}

/**
 * Delivers one webhook event: up to five scheduled attempts, 5 min / 15 min / 1 h / 4 h apart, plus manual ones on
 * request, each recorded in Postgres; it ends with the event delivered or at max retries reached.
 */
export async function deliverEvent({ eventId }: DeliverEventInput): Promise<DeliveryStatus> {
  let deliverNowRequested = false;
  setHandler(deliverNowSignal, () => {
    deliverNowRequested = true;
  });

  let attemptNumber = 0;
  let status: DeliveryStatus = 'waiting';
  for (let scheduled = 1; status === 'waiting' || status === 'failed'; scheduled++) {
    const attempt = await makeAttempt(eventId, ++attemptNumber, { kind: 'scheduled', number: scheduled }, null);
    const { retryAtMs } = attempt;
    status = attempt.status;
    // Backoff until the next scheduled attempt; a manual attempt in between leaves that time where it was.
    while (status === 'failed' && retryAtMs !== null) {
      const remainingMs = retryAtMs - (await presentWorkflowTime());
      if (remainingMs <= 0 || !(await condition(() => deliverNowRequested, remainingMs))) break;
      deliverNowRequested = false;
      ({ status } = await makeAttempt(eventId, ++attemptNumber, { kind: 'manual' }, retryAtMs));
    }
  }
  // A request that came in while the fifth attempt ran is served here, not lost with the ending workflow.
  while (deliverNowRequested && status === 'max_retries_reached') {
    deliverNowRequested = false;
    ({ status } = await makeAttempt(eventId, ++attemptNumber, { kind: 'manual' }, null));
  }
  return status;
}
