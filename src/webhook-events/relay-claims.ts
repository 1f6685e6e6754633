import type { Knex } from 'knex';
import { DELIVERY_FACTS_COLUMNS, type DeliveryFactsRow, type EventToStart, eventToStartOf, returnedForSelect } from './event-deliveries';
import { ENDPOINTS, EVENTS } from './tables';

/** The outbox relay's claims: which events a relay starts the delivery workflows of, and how a claim ends. */

/** Events a relay claimed in one statement, and the claim's time, which tells its claims from later ones. */
export interface RelayClaim {
  events: EventToStart[];
  /** Postgres's timestamp of the claim, as text: a JavaScript Date would drop its microseconds. */
  claimedAt: string | null;
}

/**
 * Claims up to `batchSize` events whose delivery workflow is not started yet and that no relay claimed within the
 * last `claimMs`, oldest first, in one statement: SKIP LOCKED lets parallel relays claim different rows, and no lock
 * outlives the statement. A relay that dies holding a claim leaves the event to the next relay once the claim runs
 * out (a second start of the same workflow id is refused by Temporal, so nothing is delivered twice).
 */
export async function claimUnstartedEvents(db: Knex, batchSize: number, claimMs: number): Promise<RelayClaim> {
  const claim = db.raw(
    `UPDATE ${EVENTS} SET relay_claimed_at = now()
     WHERE id IN (
       SELECT id FROM ${EVENTS}
       WHERE workflow_started_at IS NULL AND (relay_claimed_at IS NULL OR relay_claimed_at < now() - ? * interval '1 millisecond')
       ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED
     )
     RETURNING ${returnedForSelect(DELIVERY_FACTS_COLUMNS)}, relay_claimed_at`,
    [claimMs, batchSize],
  );
  const rows: Array<DeliveryFactsRow & { claimed_at: string }> = await db
    .with('claimed', claim)
    .from('claimed as e')
    .join(`${ENDPOINTS} as p`, 'p.id', 'e.endpoint_id')
    .select([...DELIVERY_FACTS_COLUMNS, db.raw('e.relay_claimed_at::text AS claimed_at')])
    .orderBy('e.id');
  return { events: rows.map(eventToStartOf), claimedAt: rows[0]?.claimed_at ?? null };
}

/**
 * Ends a relay's claim in one statement: the events in `started` are marked started (keeping the claim's time), those
 * in `held` keep their claim until it runs out (a workflow id conflict: tried again then, not in every pass), the
 * others are freed for the next pass at once (their start failed; the relay backs off before it tries again), unless
 * their claim ran out meanwhile and another relay claimed them since: that claim stays.
 */
export async function endClaim(db: Knex, claim: RelayClaim, started: number[], held: number[] = []): Promise<void> {
  if (claim.events.length === 0) return;
  const among = (ids: number[]) => (ids.length === 0 ? 'false' : `id IN (${ids.map(() => '?').join(', ')})`);
  const isStarted = among(started);
  await db(EVENTS)
    .whereIn(
      'id',
      claim.events.map((event) => event.identity.eventId),
    )
    // Started by another relay meanwhile (a claim that ran out while Temporal was slow): nothing left to end.
    .whereNull('workflow_started_at')
    .update({
      workflow_started_at: db.raw(`CASE WHEN ${isStarted} THEN now() END`, started),
      relay_claimed_at: db.raw(`CASE WHEN ${among([...started, ...held])} OR relay_claimed_at <> ?::timestamptz THEN relay_claimed_at END`, [
        ...started,
        ...held,
        claim.claimedAt,
      ]),
    });
}
