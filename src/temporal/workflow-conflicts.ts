import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import type { DeliveryIdentityMetrics, WorkflowConflictSource } from '../observability/metrics';
import { recordDeliveryProblem } from '../webhook-events/event-deliveries';
import type { DeliveryWorkflowConflict } from './delivery-identity';

export interface ConflictReporting {
  db: Db;
  log?: Logger;
  metrics?: DeliveryIdentityMetrics;
}

/**
 * Makes a workflow id conflict impossible to miss (docs/delivery.md#when-a-workflow-id-is-taken-by-another-event): an error log
 * line with both sides, the counter webhook_delivery_workflow_conflicts_total, and the reason as the event's
 * `last_error`, which the admin page and API show. The event itself is left as it was: not marked started.
 */
export async function reportWorkflowConflict({ db, log, metrics }: ConflictReporting, conflict: DeliveryWorkflowConflict, source: WorkflowConflictSource) {
  const { identity, existing } = conflict;
  log?.error(
    {
      eventId: identity.eventId,
      workflowId: identity.workflowId,
      eventKey: identity.key,
      existing: { runId: existing.runId, workflowType: existing.workflowType, eventKey: existing.key ?? null },
      source,
    },
    'delivery workflow id belongs to another event; nothing was started for this event',
  );
  metrics?.deliveryWorkflowConflict(source);
  await recordDeliveryProblem(db, identity.eventId, conflict.message);
}
