import type { Knex } from 'knex';
import { EVENT_DELIVERY_COLUMNS, type EventDelivery, type EventDeliveryRow, eventDeliveryOf, returnedForSelect } from './event-deliveries';
import { ENDPOINTS, EVENTS } from './tables';

/**
 * Claims up to `limit` events whose delivery looks lost, for the healing sweep: started by the relay, still waiting
 * or failed, and overdue by `marginMs` (a failed event's next attempt; a waiting event's first attempt, counted from
 * its start), which no sweep looked at within `marginMs`. One statement, SKIP LOCKED, like the relay's claim: parallel
 * sweeps take different rows, and the claim (`sweep_checked_at`) also paces how often an event is asked about.
 */
export async function claimOverdueEvents(db: Knex, { marginMs, limit }: { marginMs: number; limit: number }): Promise<EventDelivery[]> {
  const overdue = `now() - ? * interval '1 millisecond'`;
  const claim = db.raw(
    `UPDATE ${EVENTS} SET sweep_checked_at = now()
     WHERE id IN (
       SELECT id FROM ${EVENTS}
       WHERE status IN ('waiting', 'failed') AND workflow_started_at IS NOT NULL
         AND CASE WHEN status = 'failed' THEN coalesce(next_attempt_at, updated_at) ELSE workflow_started_at END < ${overdue}
         AND (sweep_checked_at IS NULL OR sweep_checked_at < ${overdue})
       ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED
     )
     RETURNING ${returnedForSelect(EVENT_DELIVERY_COLUMNS)}`,
    [marginMs, marginMs, limit],
  );
  const rows: EventDeliveryRow[] = await db
    .with('claimed', claim)
    .from('claimed as e')
    .join(`${ENDPOINTS} as p`, 'p.id', 'e.endpoint_id')
    .select(EVENT_DELIVERY_COLUMNS)
    .orderBy('e.id');
  return rows.map(eventDeliveryOf);
}
