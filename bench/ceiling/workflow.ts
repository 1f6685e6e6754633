import { proxyLocalActivities } from '@temporalio/workflow';
import type { CeilingActivities } from './activities';

// As the delivery workflow's attempt (workflows/delivery-attempt.ts): a local activity with the same limits.
const { post } = proxyLocalActivities<CeilingActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/** The ceiling of one workflow per event: one local activity POSTs the body, then the workflow completes. */
export async function ceilingDelivery(body: string): Promise<number> {
  return post(body);
}
