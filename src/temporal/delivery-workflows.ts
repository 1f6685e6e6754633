import {
  type Client,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
} from '@temporalio/client';
import { deliverEvent, deliverNowSignal, resendEvent } from '../../workflows';
import type { DeliveryStatus } from '../delivery-rules/delivery-status';

/** One delivery workflow per event, named after it: starting it twice is rejected by Temporal, not by us. */
export const deliveryWorkflowId = (eventId: number) => `webhook-event-${eventId}`;

/** A resend after the delivery workflow ended; named after the attempt it makes, so a repeated click is a no-op. */
export const resendWorkflowId = (eventId: number, attemptNumber: number) =>
  `webhook-event-${eventId}-resend-${attemptNumber}`;

// REJECT_DUPLICATE: an id that ran before (even if finished) is never run again, so a late retry of a start cannot
// deliver an event a second time; FAIL: an id that is running now is not started twice.
// The workflow task timeout is how soon an attempt on a worker that died is run again elsewhere: attempts are local
// activities inside the workflow task (workflows/delivery-attempt.ts). Temporal's default, stated because it matters.
const startOptions = {
  workflowIdReusePolicy: 'REJECT_DUPLICATE',
  workflowIdConflictPolicy: 'FAIL',
  workflowTaskTimeout: '10 seconds',
} as const;

/** Starts the delivery workflow of an event. Idempotent: a workflow that exists already counts as started. */
export async function startDeliveryWorkflow(client: Client, taskQueue: string, eventId: number): Promise<'started' | 'already-started'> {
  try {
    await client.workflow.start(deliverEvent, {
      taskQueue,
      workflowId: deliveryWorkflowId(eventId),
      args: [{ eventId }],
      ...startOptions,
    });
    return 'started';
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return 'already-started';
    throw err;
  }
}

/** What the event looks like when a resend is decided; read again once the delivery workflow turns out to be over. */
export type ResendableEvent = { status: DeliveryStatus; attempts: number };

/**
 * "Resend now" for an event whose first attempt has been made: a signal to its delivery workflow while that still
 * runs (backoff), otherwise a short workflow making one manual attempt. Returns the workflow that makes it, or
 * 'delivered' when the event was delivered by the time its delivery workflow ended.
 */
export async function requestResend(
  client: Client,
  taskQueue: string,
  eventId: number,
  readEvent: () => Promise<ResendableEvent>,
): Promise<{ workflowId: string } | 'delivered'> {
  const workflowId = deliveryWorkflowId(eventId);
  try {
    await client.workflow.getHandle(workflowId).signal(deliverNowSignal);
    return { workflowId };
  } catch (err) {
    if (!(err instanceof WorkflowNotFoundError)) throw err;
  }
  // Read only now: the workflow may have recorded its last attempt after the caller first looked, and that
  // attempt's number must not be reused (it would be reported as recorded instead of sent).
  const event = await readEvent();
  if (event.status === 'delivered') return 'delivered';
  const attemptNumber = event.attempts + 1;
  const resendId = resendWorkflowId(eventId, attemptNumber);
  try {
    await client.workflow.start(resendEvent, {
      taskQueue,
      workflowId: resendId,
      args: [{ eventId, attemptNumber }],
      ...startOptions,
    });
  } catch (err) {
    // The same resend was requested a moment ago and is under way or done: nothing more to do.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  return { workflowId: resendId };
}
