import { type Client, WorkflowExecutionAlreadyStartedError, WorkflowNotFoundError } from '@temporalio/client';
import type { Duration } from '@temporalio/common';
import { deliverEvent, resendEvent, resendSignal, resumeDelivery } from '../../workflows';
import { type DeliveryFacts, type DeliveryRun, deliveryDetails, deliverySummary } from '../delivery-rules/delivery-texts';
import type { DeliveryStatus } from '../delivery-rules/delivery-status';
import { type DeliveryOwner, memoOf } from '../delivery-rules/event-identity';
import { WEBHOOK_ATTEMPTS, WEBHOOK_ENVIRONMENT, WEBHOOK_EVENT_TYPE, WEBHOOK_STATUS } from '../delivery-rules/search-attributes';
import type { Db } from '../db/knex';
import type { EventDelivery, EventToStart } from '../webhook-events/event-deliveries';
import { readInstallation } from '../webhook-events/installation';
import { ownDelivery } from './delivery-identity';
import { inTraceContext, linkedToTrace } from '../tracing';

// The workflow task timeout is how soon an attempt on a worker that died is run again elsewhere: attempts are local
// activities inside the workflow task (workflows/delivery.ts). Temporal's default, stated because it matters.
const WORKFLOW_TASK_TIMEOUT: Duration = '10 seconds';

/**
 * What Temporal UI shows of a delivery from its start: summary, details, and the search attributes it is found by.
 * (bench/ceiling.ts gives its trivial workflows the same, to tell what the operators' view costs Temporal.)
 */
export function describedAs(facts: DeliveryFacts, { status, attempts }: { status: DeliveryStatus; attempts: number }, run: DeliveryRun = 'delivery') {
  return {
    staticSummary: deliverySummary(facts, run),
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
 * Where this deployment's delivery workflows run: its task queue, and its installation (this database's id, migration
 * 020), which every workflow carries in its input with the event's key so that a worker of another deployment on the
 * same task queue never sends or records it as its own event of the same id (activities/delivery-activities.ts).
 */
export interface DeliveryQueue {
  taskQueue: string;
  installation: string;
}

export const deliveryQueueOf = async (db: Db, taskQueue: string): Promise<DeliveryQueue> => ({ taskQueue, installation: await readInstallation(db) });

/**
 * Every run for an event: on the deployment's task queue, under the event's stored workflow id, with its key in the
 * memo (src/delivery-rules/event-identity.ts) and its owner in the input.
 */
const runOf = ({ taskQueue, installation }: DeliveryQueue, { identity }: EventToStart) => {
  const owner: DeliveryOwner = { installation, key: identity.key };
  return {
    taskQueue,
    workflowId: identity.workflowId,
    memo: memoOf(identity),
    workflowTaskTimeout: WORKFLOW_TASK_TIMEOUT,
    args: [{ eventId: identity.eventId, owner }] as [{ eventId: number; owner: DeliveryOwner }],
  };
};

/**
 * A start Temporal refused because a workflow under the event's id exists (or ran) answers `answer` only if that
 * workflow is the event's own: it is described, and it must carry the event's key. Otherwise the start failed
 * (DeliveryWorkflowConflict), which the caller reports; the event is never taken as started. Other errors as they are.
 */
async function ifOwnWorkflowHasTheId<A>(client: Client, event: EventToStart, err: unknown, answer: A): Promise<A> {
  if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  await ownDelivery(client, event.identity);
  return answer;
}

/**
 * Starts the delivery workflow of an event, inside the trace of the call that caused it. Idempotent: the event's own
 * workflow, existing already, counts as started; another event's under the same id throws DeliveryWorkflowConflict.
 * REJECT_DUPLICATE: an id that ran before (even if finished) is never run again, so a late retry of a start cannot
 * deliver an event a second time; FAIL: an id that is running now is not started twice.
 *
 * `eager`: the client shares its NativeConnection with a delivery worker of the same task queue (the `delivery` and
 * `all` roles), so Temporal may hand the first workflow task back with the start's answer instead of through a
 * poll (eager workflow start): then 'started-eagerly', and that worker normally runs the first attempt at once (should
 * it refuse the task, Temporal hands it to another worker after the task's timeout). Without a free slot on that
 * worker, or where the server has it switched off, the workflow starts as usual; either way the start is recorded by
 * Temporal before it answers.
 */
export async function startDeliveryWorkflow(
  client: Client,
  queue: DeliveryQueue,
  event: EventToStart,
  { eager = false }: { eager?: boolean } = {},
): Promise<'started' | 'started-eagerly' | 'already-started'> {
  try {
    const handle = await inTraceContext(event.traceContext, () =>
      client.workflow.start(deliverEvent, {
        ...runOf(queue, event),
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
        requestEagerStart: eager,
        ...describedAs(event.facts, { status: 'waiting', attempts: 0 }),
      }),
    );
    return handle.eagerlyStarted ? 'started-eagerly' : 'started';
  } catch (err) {
    return ifOwnWorkflowHasTheId(client, event, err, 'already-started' as const);
  }
}

/**
 * Starts a delivery again where Postgres says it stands (resumeDelivery), in the event's trace (the same cause), for
 * an event whose workflow Temporal lost (src/temporal/delivery-sweep.ts). Only after a closed run or none: a run of
 * the event's that is running now is left alone ('already-running'); another event's workflow throws
 * DeliveryWorkflowConflict.
 */
export async function startResumedDelivery(client: Client, queue: DeliveryQueue, event: EventDelivery): Promise<'started' | 'already-running'> {
  try {
    await inTraceContext(event.traceContext, () =>
      client.workflow.start(resumeDelivery, {
        ...runOf(queue, event),
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        workflowIdConflictPolicy: 'FAIL',
        ...describedAs(event.facts, event, 'resume'),
      }),
    );
    return 'started';
  } catch (err) {
    return ifOwnWorkflowHasTheId(client, event, err, 'already-running' as const);
  }
}

/**
 * "Resend now" for an event whose delivery has started: a signal to its delivery workflow while that still runs
 * (an attempt under way or a backoff); after it ended, a new run under the same id (resendEvent) that takes the
 * request. Answers 'not-running' for an event still waiting whose workflow is not running (not started yet, or
 * ended since the event was read): the caller reads it again. The workflow under the id is described first: a
 * request is never handed to another event's workflow (DeliveryWorkflowConflict).
 */
export function requestResend(client: Client, queue: DeliveryQueue, event: EventDelivery): Promise<'accepted' | 'not-running'> {
  // A new cause, in the operator's trace: it links to the platform call's trace rather than joining it.
  return linkedToTrace('resend webhook event', event.traceContext, () => handOverResend(client, queue, event));
}

async function handOverResend(client: Client, queue: DeliveryQueue, event: EventDelivery): Promise<'accepted' | 'not-running'> {
  const { workflowId } = event.identity;
  const request = { seenAttempts: event.attempts };
  const existing = await ownDelivery(client, event.identity);
  if (event.status === 'waiting') {
    // Never start anything for it: the relay starts its delivery, and a resend run would take its place.
    if (existing.kind === 'none') return 'not-running';
    try {
      await client.workflow.getHandle(workflowId).signal(resendSignal, request);
      return 'accepted';
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return 'not-running';
      throw err;
    }
  }
  const signalWithStart = () =>
    client.workflow.signalWithStart(resendEvent, {
      ...runOf(queue, event),
      signal: resendSignal,
      signalArgs: [request],
      // A new run after the delivery (or an earlier resend) ended; the running one takes the signal.
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      workflowIdConflictPolicy: 'USE_EXISTING',
      ...describedAs(event.facts, event, 'resend'),
    });
  try {
    await signalWithStart();
  } catch (err) {
    // Resends racing for an ended run: a server may start one run and refuse the others as "already started" rather
    // than signal that run (Temporal's time-skipping server does; the real server retries inside). Asked again, the
    // run that won takes the signal, or a new run starts if it ended meanwhile.
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    await signalWithStart();
  }
  return 'accepted';
}
