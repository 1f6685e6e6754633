import type { Db } from '../src/db/knex';
import type { RetentionActivities, RetentionBatchRequest } from '../src/delivery-rules/activity-contracts';
import type { EventIdentity } from '../src/delivery-rules/event-identity';
import type { Logger } from '../src/logger';
import type { RetentionMetrics } from '../src/observability/metrics';
import { deleteEndedEvents, dropEndedPayloads } from '../src/webhook-events/retention-batches';

export interface RetentionActivityDependencies {
  db: Db;
  log: Logger;
  /**
   * Which of these events have a running workflow (a resend), asked before they are deleted: the worker passes
   * src/temporal/running-deliveries.ts with its client.
   */
  runningAmong: (events: EventIdentity[]) => Promise<number[]>;
  metrics?: RetentionMetrics;
}

/**
 * The retention purge's activities: each deletes (or drops the payloads of) one batch of ended events in one
 * transaction. Idempotent: a retried batch finds what is still due.
 */
export function createRetentionActivities({ db, log, runningAmong, metrics }: RetentionActivityDependencies): RetentionActivities {
  const batchOf = (request: RetentionBatchRequest) => ({
    createdBefore: new Date(request.createdBefore),
    limit: request.limit,
    passedOver: request.passedOver,
    runningAmong,
  });

  async function deleteEndedEventsBatch(request: RetentionBatchRequest) {
    const result = await deleteEndedEvents(db, batchOf(request));
    metrics?.retentionDeleted({ events: result.events, attempts: result.attempts });
    log.info({ deletedEvents: result.events, deletedAttempts: result.attempts, passedOver: result.passedOver }, 'retention deleted ended webhook events');
    return result;
  }

  async function dropEndedPayloadsBatch(request: RetentionBatchRequest) {
    const result = await dropEndedPayloads(db, batchOf(request));
    metrics?.retentionPayloadsDropped(result.events);
    log.info({ droppedPayloads: result.events, passedOver: result.passedOver }, 'retention dropped webhook payloads');
    return result;
  }

  return { deleteEndedEventsBatch, dropEndedPayloadsBatch };
}
