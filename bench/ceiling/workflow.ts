import { proxyLocalActivities, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { attemptingDetails, attemptSummary, recordedDetails } from '../../src/delivery-rules/delivery-texts';
import { WEBHOOK_ATTEMPTS, WEBHOOK_STATUS } from '../../src/delivery-rules/search-attributes';
import type { CeilingActivities } from './activities';

// As the delivery workflow's attempt (workflows/delivery.ts): a local activity with the same limits.
const ATTEMPT_OPTIONS = {
  startToCloseTimeout: '2 minutes',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
} as const;
const { post, attemptFromOutbox } = proxyLocalActivities<CeilingActivities>(ATTEMPT_OPTIONS);

/** The ceiling of one workflow per event: one local activity POSTs the body, then the workflow completes. */
export async function ceilingDelivery(body: string): Promise<number> {
  return post(body);
}

/**
 * The same, telling Temporal UI what the delivery workflow tells it (workflows/delivery.ts): the attempt's summary,
 * current details, and the status and attempt count upserted as search attributes once the POST is answered. Its
 * start carries the delivery's summary, details and search attributes (bench/ceiling/starts.ts).
 */
export async function ceilingDeliveryDescribed(body: string): Promise<number> {
  return describedDelivery((summary) => post.executeWithOptions({ ...ATTEMPT_OPTIONS, summary }, [body]), true);
}

/**
 * The view's delivery of an event in the outbox (the `floor-outbox` system): the attempt reads the event with its
 * start and records its outcome with the event's status, in the service's two statements (activities.ts).
 */
export async function ceilingDeliveryFromOutbox(eventId: number): Promise<number> {
  return describedDelivery((summary) => attemptFromOutbox.executeWithOptions({ ...ATTEMPT_OPTIONS, summary }, [eventId]), true);
}

/**
 * The view without the upsert after a delivering first attempt: the search attributes stay as the start set them,
 * and the closed workflow's status tells that it delivered. What the upsert costs on the happy path (issue 29).
 */
export async function ceilingDeliveryDescribedLean(body: string): Promise<number> {
  return describedDelivery((summary) => post.executeWithOptions({ ...ATTEMPT_OPTIONS, summary }, [body]), false);
}

async function describedDelivery(attemptOnce: (summary: string) => Promise<number>, upsertDelivered: boolean): Promise<number> {
  const attempt = { kind: 'scheduled', number: 1 } as const;
  const summary = attemptSummary(1, attempt);
  setCurrentDetails(attemptingDetails('waiting', 1, attempt));
  const startedAtMs = Date.now();
  const responseCode = await attemptOnce(summary);
  if (upsertDelivered) {
    upsertSearchAttributes([
      { key: WEBHOOK_STATUS, value: 'delivered' },
      { key: WEBHOOK_ATTEMPTS, value: 1 },
    ]);
  }
  const last = { attemptNumber: 1, attempt, responseCode, error: null, startedAtMs, durationMs: Date.now() - startedAtMs };
  setCurrentDetails(recordedDetails('delivered', last, null));
  return responseCode;
}
