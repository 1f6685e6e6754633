import type { Knex } from 'knex';
import type { DeliveryStatus } from '../delivery-rules/delivery-status';
import type { EventIdentity } from '../delivery-rules/event-identity';
import type { RetentionBatchResult } from '../delivery-rules/activity-contracts';
import { identityOf } from './event-deliveries';
import { ATTEMPTS, EVENTS, type WebhookEventRow } from './tables';

/** Retention in batches (the purge workflow's activities): ended events deleted, or their payloads dropped. */

/** The statuses after which nothing is scheduled: only these events are ever deleted or lose their payload. */
export const ENDED_STATUSES = ['delivered', 'max_retries_reached'] as const satisfies readonly DeliveryStatus[];

export interface RetentionBatch {
  /** Events created before this are due. */
  createdBefore: Date;
  limit: number;
  /** Ids passed over before because their workflow was running; the batch does not look at them again. */
  passedOver: readonly number[];
  /**
   * Which of these events (all at max retries reached) have a running workflow: a resend may be making an attempt.
   * Asked inside the batch's transaction, after its rows are locked.
   */
  runningAmong(events: EventIdentity[]): Promise<number[]>;
}

/**
 * Locks up to `limit` due events, oldest first: ended, created before the cutoff, not passed over before, not locked by
 * anyone else (a resend being requested holds its row: withEventHeldForResend). Those at max retries whose workflow
 * runs (a resend) are passed over; `apply` handles the rest in the same transaction.
 */
async function inRetentionBatch(
  db: Knex,
  batch: RetentionBatch,
  due: (query: Knex.QueryBuilder) => Knex.QueryBuilder,
  apply: (trx: Knex.Transaction, eventIds: number[]) => Promise<number>,
): Promise<RetentionBatchResult> {
  return db.transaction(async (trx) => {
    const rows: Array<Pick<WebhookEventRow, 'id' | 'status' | 'uuid' | 'workflow_id'>> = await due(trx(EVENTS))
      .whereIn('status', ENDED_STATUSES)
      .where('created_at', '<', batch.createdBefore)
      .whereNotIn('id', batch.passedOver)
      .orderBy([{ column: 'created_at' }, { column: 'id' }])
      .limit(batch.limit)
      .forUpdate()
      .skipLocked()
      .select('id', 'status', 'uuid', 'workflow_id');
    const maybeRunning = rows.filter((row) => row.status === 'max_retries_reached').map(identityOf);
    const running = new Set(maybeRunning.length > 0 ? await batch.runningAmong(maybeRunning) : []);
    const ids = rows.map((row) => row.id).filter((id) => !running.has(id));
    const attempts = ids.length > 0 ? await apply(trx, ids) : 0;
    return { events: ids.length, attempts, passedOver: [...running], done: rows.length < batch.limit };
  });
}

/** Deletes one batch of due events with their attempts. */
export function deleteEndedEvents(db: Knex, batch: RetentionBatch): Promise<RetentionBatchResult> {
  return inRetentionBatch(
    db,
    batch,
    (query) => query,
    async (trx, ids) => {
      const attempts = await trx(ATTEMPTS).whereIn('event_id', ids).delete();
      // Its numbers (webhook_event_references) and interrupted attempts' starts go with it (ON DELETE CASCADE).
      await trx(EVENTS).whereIn('id', ids).delete();
      return attempts;
    },
  );
}

/**
 * Drops the payload of one batch of due events that still have theirs, with everything else that holds personal
 * data: the response bodies (a subscriber may echo the payload) and the e-mail search key. Status, response codes,
 * errors, timings and the ids the event is found by stay until the event is deleted.
 */
export function dropEndedPayloads(db: Knex, batch: RetentionBatch): Promise<RetentionBatchResult> {
  return inRetentionBatch(
    db,
    batch,
    (query) => query.whereNull('payload_dropped_at'),
    async (trx, ids) => {
      await trx(ATTEMPTS).whereIn('event_id', ids).whereNotNull('response_body').update({ response_body: null });
      await trx(EVENTS)
        .whereIn('id', ids)
        .update({ payload: '', last_response_body: null, donor_email: null, payload_dropped_at: trx.fn.now(), updated_at: trx.fn.now() });
      return 0;
    },
  );
}
