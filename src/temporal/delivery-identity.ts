import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import { EVENT_KEY_MEMO, type EventIdentity, isOwnWorkflow } from '../delivery-rules/event-identity';

/** What runs (or ran) under an event's workflow id, as Temporal describes its latest run. */
export type ExistingDelivery =
  | { kind: 'none' }
  | { kind: 'own'; running: boolean }
  | { kind: 'foreign'; runId: string; workflowType: string; key: unknown };

/**
 * Describes the latest run under the event's workflow id (its current state, not the eventually consistent
 * visibility store) and tells whose it is by the key in its memo.
 */
export async function describeDelivery(client: Client, identity: EventIdentity): Promise<ExistingDelivery> {
  try {
    const description = await client.workflow.getHandle(identity.workflowId).describe();
    if (isOwnWorkflow(description.memo, identity)) return { kind: 'own', running: description.status.name === 'RUNNING' };
    return { kind: 'foreign', runId: description.runId, workflowType: description.type, key: description.memo?.[EVENT_KEY_MEMO] };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return { kind: 'none' };
    throw err;
  }
}

/**
 * The event's workflow id is taken by a workflow of another event (another database's, or one whose key differs):
 * nothing was started or signalled for this event. Never taken as "already started".
 */
export class DeliveryWorkflowConflict extends Error {
  constructor(
    readonly identity: EventIdentity,
    readonly existing: Extract<ExistingDelivery, { kind: 'foreign' }>,
  ) {
    const theirs = typeof existing.key === 'string' ? `key ${existing.key}` : 'no event key';
    super(
      `Workflow id ${identity.workflowId} belongs to another event's workflow (${existing.workflowType}, run ${existing.runId}, ${theirs}), ` +
        `not to event ${identity.eventId} (key ${identity.key}); nothing was started for this event`,
    );
    this.name = 'DeliveryWorkflowConflict';
  }
}

/** Describes the event's workflow and throws DeliveryWorkflowConflict when it is another event's. */
export async function ownDelivery(client: Client, identity: EventIdentity): Promise<Exclude<ExistingDelivery, { kind: 'foreign' }>> {
  const existing = await describeDelivery(client, identity);
  if (existing.kind === 'foreign') throw new DeliveryWorkflowConflict(identity, existing);
  return existing;
}
