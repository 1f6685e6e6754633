import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import { deliverEvent, resendEvent, resendSignal } from '../../workflows';
import { type DeliveryFacts, deliveryDetails, deliverySummary } from '../delivery-rules/delivery-texts';
import type { DeliveryStatus } from '../delivery-rules/delivery-status';
import { WEBHOOK_ATTEMPTS, WEBHOOK_ENVIRONMENT, WEBHOOK_EVENT_TYPE, WEBHOOK_STATUS } from '../delivery-rules/search-attributes';
import type { EventDelivery } from '../webhooks/event-store';

/**
 * One delivery workflow per event, named after it: starting it twice is rejected by Temporal, not by us. A resend
 * after it ended runs under the same id (a later run), so the event's workflow is always this one.
 */
export const deliveryWorkflowId = (eventId: number) => `webhook-event-${eventId}`;

// The workflow task timeout is how soon an attempt on a worker that died is run again elsewhere: attempts are local
// activities inside the workflow task (workflows/delivery.ts). Temporal's default, stated because it matters.
const WORKFLOW_TASK_TIMEOUT = '10 seconds';

/**
 * What Temporal UI shows of a delivery from its start: summary, details, and the search attributes it is found by.
 * (bench/ceiling.ts gives its trivial workflows the same, to tell what the operators' view costs Temporal.)
 */
export function describedAs(facts: DeliveryFacts, { status, attempts }: { status: DeliveryStatus; attempts: number }, resend = false) {
  return {
    staticSummary: deliverySummary(facts, resend),
    staticDetails: deliveryDetails(facts),
    typedSearchAttributes: [
      { key: WEBHOOK_EVENT_TYPE, value: facts.eventType },
      { key: WEBHOOK_STATUS, value: status },
      { key: WEBHOOK_ATTEMPTS, value: attempts },
      ...(facts.environment === null ? [] : [{ key: WEBHOOK_ENVIRONMENT, value: facts.environment }]),
    ],
  };
}

/**
 * Starts the delivery workflow of an event. Idempotent: a workflow that exists already counts as started.
 * REJECT_DUPLICATE: an id that ran before (even if finished) is never run again, so a late retry of a start cannot
 * deliver an event a second time; FAIL: an id that is running now is not started twice.
 *
 * `eager`: the client shares its NativeConnection with a delivery worker of the same task queue (the `delivery` and
 * `all` roles), so Temporal may hand the first workflow task back with the start's answer instead of through a
 * poll (eager workflow start). Without a free slot on that worker, or where the server has it switched off, the
 * workflow starts as usual; either way the start is recorded by Temporal before it answers.
 */
export async function startDeliveryWorkflow(
  client: Client,
  taskQueue: string,
  facts: DeliveryFacts,
  { eager = false }: { eager?: boolean } = {},
): Promise<'started' | 'already-started'> {
  try {
    await client.workflow.start(deliverEvent, {
      taskQueue,
      workflowId: deliveryWorkflowId(facts.eventId),
      args: [{ eventId: facts.eventId }],
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
      workflowIdConflictPolicy: 'FAIL',
      workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
      requestEagerStart: eager,
      ...describedAs(facts, { status: 'waiting', attempts: 0 }),
    });
    return 'started';
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return 'already-started';
    throw err;
  }
}

/**
 * "Resend now" for an event whose delivery has started: a signal to its delivery workflow while that still runs
 * (an attempt under way or a backoff); after it ended, a new run under the same id (resendEvent) that takes the
 * request. Answers 'not-running' for an event still waiting whose workflow is not running (not started yet, or
 * ended since the event was read): the caller reads it again.
 */
export async function requestResend(client: Client, taskQueue: string, event: EventDelivery): Promise<'accepted' | 'not-running'> {
  const workflowId = deliveryWorkflowId(event.facts.eventId);
  const request = { seenAttempts: event.attempts };
  if (event.status === 'waiting') {
    // Never start anything for it: the relay starts its delivery, and a resend run would take its place.
    try {
      await client.workflow.getHandle(workflowId).signal(resendSignal, request);
      return 'accepted';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return 'not-running';
      throw err;
    }
  }
  await client.workflow.signalWithStart(resendEvent, {
    taskQueue,
    workflowId,
    args: [{ eventId: event.facts.eventId }],
    signal: resendSignal,
    signalArgs: [request],
    // A new run after the delivery (or an earlier resend) ended; the running one takes the signal.
    workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    workflowIdConflictPolicy: 'USE_EXISTING',
    workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
    ...describedAs(event.facts, event, true),
  });
  return 'accepted';
}
