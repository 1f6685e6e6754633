import type { Client } from '@temporalio/client';
import type { Db } from '../src/db/knex';
import type { Logger } from '../src/logger';
import type { RetentionMetrics } from '../src/observability/metrics';
import { runningDeliveries } from '../src/temporal/running-deliveries';
import type { EventIdentity } from '../src/delivery-rules/event-identity';
import type { RetentionActivities, RetentionBatchRequest } from '../src/delivery-rules/retention';
import { deleteEndedEvents, dropEndedPayloads } from '../src/webhook-events/retention-batches';

export interface RetentionActivityDependencies {
  db: Db;
  log: Logger;
  /** Asks whether a due event's workflow runs (a resend) before it is deleted. */
  client: Client;
  metrics?: RetentionMetrics;
}

/**
 * The retention purge's activities: each deletes (or drops the payloads of) one batch of ended events in one
 * transaction. Idempotent: a retried batch finds what is still due.
 */
export function createRetentionActivities({ db, log, client, metrics }: RetentionActivityDependencies): RetentionActivities {
  const batchOf = (request: RetentionBatchRequest) => ({
    createdBefore: new Date(request.createdBefore),
    limit: request.limit,
    passedOver: request.passedOver,
    runningAmong: (events: EventIdentity[]) => runningDeliveries(client, events),
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
