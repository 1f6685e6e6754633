import type { Knex } from 'knex';
import type { AttemptOutcome, DeliveryStatus } from '../delivery-rules/delivery-status';
import type { WebhookEventType } from '../webhooks/event-types';
import { ATTEMPTS, type DeliveryAttemptRow, EVENTS } from './tables';

/** The events a bulk recovery resends (admin API and the recovery workflow), and what answered each resend. */

/** The statuses a recovery resends: an event that failed and waits for a retry, or gave up. */
export const RECOVERABLE_STATUSES = ['failed', 'max_retries_reached'] as const satisfies readonly DeliveryStatus[];

export interface RecoveryFilter {
  /** Created at or after. */
  createdFrom: Date;
  /** Created before. */
  createdTo: Date;
  /** Only these types; empty: every type. */
  eventTypes: readonly WebhookEventType[];
}

/** Events a recovery resends: failed or at max retries, created in the range, of the types; no test events, none without payload. */
function recoverableEvents(db: Knex, { createdFrom, createdTo, eventTypes }: RecoveryFilter) {
  const query = db(EVENTS)
    .whereIn('status', RECOVERABLE_STATUSES)
    .where('created_at', '>=', createdFrom)
    .where('created_at', '<', createdTo)
    .where('test', false)
    .whereNull('payload_dropped_at');
  if (eventTypes.length > 0) query.whereIn('event_type', eventTypes);
  return query;
}

export interface RecoverableCount {
  total: number;
  byStatus: Record<(typeof RECOVERABLE_STATUSES)[number], number>;
}

export async function countRecoverableEvents(db: Knex, filter: RecoveryFilter): Promise<RecoverableCount> {
  const rows: Array<{ status: (typeof RECOVERABLE_STATUSES)[number]; count: string }> = await recoverableEvents(db, filter)
    .select('status')
    .count({ count: '*' })
    .groupBy('status');
  const byStatus = { failed: 0, max_retries_reached: 0 };
  for (const row of rows) byStatus[row.status] = Number(row.count);
  return { total: byStatus.failed + byStatus.max_retries_reached, byStatus };
}

/** The next `limit` ids of the events a recovery resends, after `afterId`, in id order. */
export async function listRecoverableEventIds(db: Knex, filter: RecoveryFilter, afterId: number, limit: number): Promise<number[]> {
  const rows: Array<{ id: number }> = await recoverableEvents(db, filter).where('id', '>', afterId).orderBy('id').limit(limit).select('id');
  return rows.map((row) => row.id);
}

/** The outcome of the first attempt after `seenAttempts`, once it is recorded. */
export async function findOutcomeAfter(db: Knex, eventId: number, seenAttempts: number): Promise<AttemptOutcome | undefined> {
  const row: Pick<DeliveryAttemptRow, 'outcome'> | undefined = await db(ATTEMPTS)
    .where({ event_id: eventId })
    .where('number', '>', seenAttempts)
    .orderBy('number')
    .first('outcome');
  return row?.outcome;
}
