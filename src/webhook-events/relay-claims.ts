import type { Knex } from 'knex';
import { DELIVERY_FACTS_COLUMNS, type DeliveryFactsRow, type EventToStart, eventToStartOf, returnedForSelect } from './event-deliveries';
import { preparedStatement, runPrepared } from '../db/prepared-statements';
import { ENDPOINTS, EVENTS } from './tables';

/** The outbox relay's claims: which events a relay starts the delivery workflows of, and how a claim ends. */

/** Events a relay claimed in one statement, and the claim's time, which tells its claims from later ones. */
export interface RelayClaim {
  events: EventToStart[];
  /** Postgres's timestamp of the claim, as text: a JavaScript Date would drop its microseconds. */
  claimedAt: string | null;
}

// $1 how long a claim lasts (ms), $2 the batch size, $3 the highest event id to take (null: any), $4 ids not to take.
const CLAIM_UNSTARTED_EVENTS = preparedStatement(
  'claim-unstarted-events',
  `WITH claimed AS (
     UPDATE ${EVENTS} SET relay_claimed_at = now()
     WHERE id IN (
       SELECT id FROM ${EVENTS}
       WHERE workflow_started_at IS NULL AND (relay_claimed_at IS NULL OR relay_claimed_at < now() - $1 * interval '1 millisecond')
         AND ($3::bigint IS NULL OR id <= $3::bigint) AND id <> ALL($4::bigint[])
       ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED
     )
     RETURNING ${returnedForSelect(DELIVERY_FACTS_COLUMNS)}, relay_claimed_at
   )
   SELECT ${DELIVERY_FACTS_COLUMNS.join(', ')}, e.relay_claimed_at::text AS claimed_at
     FROM claimed AS e JOIN ${ENDPOINTS} AS p ON p.id = e.endpoint_id
    ORDER BY e.id`,
);

/**
 * Claims up to `batchSize` events whose delivery workflow is not started yet and that no relay claimed within the
 * last `claimMs`, oldest first, in one statement: SKIP LOCKED lets parallel relays claim different rows, and no lock
 * outlives the statement. A relay that dies holding a claim leaves the event to the next relay once the claim runs
 * out (a second start of the same workflow id is refused by Temporal, so nothing is delivered twice). With
 * `upToId`, only events up to that id: what a relay without the lead takes (src/temporal/outbox-relay.ts). Never
 * the events in `notClaimed`: those the leading relay started from their notification without a claim.
 */
export async function claimUnstartedEvents(
  db: Knex,
  batchSize: number,
  claimMs: number,
  { upToId = null, notClaimed = [] }: { upToId?: number | null; notClaimed?: number[] } = {},
): Promise<RelayClaim> {
  const rows = await runPrepared<DeliveryFactsRow & { claimed_at: string }>(db, CLAIM_UNSTARTED_EVENTS, [claimMs, batchSize, upToId, notClaimed]);
  return { events: rows.map(eventToStartOf), claimedAt: rows[0]?.claimed_at ?? null };
}

// $1 the claimed events, $2 those started, $3 those held, $4 the claim's time.
const END_CLAIM = preparedStatement(
  'end-relay-claim',
  `UPDATE ${EVENTS} SET
     workflow_started_at = CASE WHEN id = ANY($2::bigint[]) THEN now() END,
     relay_claimed_at = CASE WHEN id = ANY($2::bigint[]) OR id = ANY($3::bigint[]) OR relay_claimed_at <> $4::timestamptz THEN relay_claimed_at END
   WHERE id = ANY($1::bigint[])
     -- Started by another relay meanwhile (a claim that ran out while Temporal was slow), or marked by its first
     -- attempt: nothing left to end.
     AND workflow_started_at IS NULL`,
);

/**
 * Ends a relay's claim on `claim.events` in one statement: the events in `started` are marked started (keeping the
 * claim's time), those in `held` keep their claim until it runs out (a workflow id conflict: tried again then, not in
 * every pass), the others are freed for the next pass at once (their start failed; the relay backs off before it
 * tries again), unless their claim ran out meanwhile and another relay claimed them since: that claim stays. No
 * statement for no events: the relay leaves the events whose workflow started eagerly out of `claim.events` (their
 * first attempt marks them started).
 */
export async function endClaim(db: Knex, claim: RelayClaim, started: number[], held: number[] = []): Promise<void> {
  if (claim.events.length === 0) return;
  await runPrepared(db, END_CLAIM, [claim.events.map((event) => event.identity.eventId), started, held, claim.claimedAt]);
}

// $1 the events started, $2 those held.
const END_NOTIFIED_STARTS = preparedStatement(
  'end-notified-starts',
  `UPDATE ${EVENTS} SET
     workflow_started_at = CASE WHEN id = ANY($1::bigint[]) THEN now() END,
     relay_claimed_at = CASE WHEN id = ANY($1::bigint[]) THEN relay_claimed_at ELSE now() END
   WHERE (id = ANY($1::bigint[]) OR id = ANY($2::bigint[])) AND workflow_started_at IS NULL`,
);

/**
 * What a claim's end does for events the leading relay started from their notification, unclaimed: those in
 * `started` are marked started, those in `held` (a workflow id conflict) claimed now, so that no relay tries them
 * again until the claim runs out. Nothing for an event whose start failed: unclaimed, the next pass takes it. No
 * statement for no events: an eager start's first attempt marks its event.
 */
export async function endNotifiedStarts(db: Knex, started: number[], held: number[]): Promise<void> {
  if (started.length === 0 && held.length === 0) return;
  await runPrepared(db, END_NOTIFIED_STARTS, [started, held]);
}

const HIGHEST_EVENT_ID = preparedStatement('highest-event-id', `SELECT coalesce(max(id), 0) AS id FROM ${EVENTS}`);

/** The highest id of the events committed so far (0: none); a relay without the lead notes it to know what waited. */
export async function highestEventId(db: Knex): Promise<number> {
  const [{ id }] = await runPrepared<{ id: string }>(db, HIGHEST_EVENT_ID, []);
  return Number(id);
}
