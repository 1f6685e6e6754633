import type { Db } from '../../src/db/knex';
import { sleep } from './wait';
import type { RecordingSubscriber } from './subscriber';

const FINAL = ['delivered', 'max_retries_reached'];

/** Waits until every committed event has reached a final status, or the time is up; returns whether it did. */
export async function waitUntilAllFinal(db: Db, expected: number, timeoutMs: number, onTick?: (final: number) => void): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const [{ total, final }] = await db('webhook_events').select(
        db.raw('count(*)::int AS total'),
        db.raw('count(*) FILTER (WHERE status IN (?, ?))::int AS final', FINAL),
      );
      onTick?.(final);
      if (total >= expected && final === total) return true;
    } catch {
      // the database may be down during the drill; keep waiting
    }
    if (Date.now() > deadline) return false;
    await sleep(1_000);
  }
}

export interface DeliveryVerdict {
  committedEvents: number;
  delivered: number;
  maxRetriesReached: number;
  /** Committed events that never reached a final status: lost, as far as the subscriber is concerned. */
  notFinal: number[];
  /** Events whose attempt rows are not 1..n, disagree with the event's counters, or whose last response differs. */
  attemptLogProblems: string[];
  /** Delivered according to Postgres, but the subscriber never saw the request. */
  deliveredButNotReceived: number[];
  /** Requests the subscriber received for an envelope id that is not a committed event. */
  receivedUnknown: number[];
  requestsReceived: number;
  /** Requests beyond the first per envelope id. */
  duplicateDeliveries: number;
  eventsDeliveredMoreThanOnce: number;
  /** Attempt rows with an outcome, and attempt starts left without one (migration 022): the attempt log's rows. */
  attemptsLogged: number;
  /** Of those, the starts left without an outcome: attempts whose worker was lost, interrupted. */
  interruptedAttempts: number;
  /**
   * Events whose attempt log (attempts with an outcome and interrupted ones) has fewer rows than the requests the
   * subscriber received for them: a request that left no trace. Not part of deliveriesConsistent: a restored database
   * forgets attempts the subscriber saw (database-restore).
   */
  attemptsBelowRequests: string[];
}

/** Nothing lost, every attempt log as it should be, every delivery received, nothing received that was not committed. */
export const deliveriesConsistent = (verdict: DeliveryVerdict): boolean =>
  verdict.notFinal.length === 0 &&
  verdict.attemptLogProblems.length === 0 &&
  verdict.deliveredButNotReceived.length === 0 &&
  verdict.receivedUnknown.length === 0;

/** Checks, from Postgres and the subscriber's record, that every committed event was delivered exactly as logged. */
export async function verifyDeliveries(db: Db, subscriber: RecordingSubscriber): Promise<DeliveryVerdict> {
  const events: Array<{
    id: number;
    status: string;
    attempts: number;
    last_response_code: number | null;
    last_response_body: string | null;
    last_error: string | null;
  }> = await db('webhook_events').select('id', 'status', 'attempts', 'last_response_code', 'last_response_body', 'last_error').orderBy('id');
  const attempts: Array<{ event_id: number; number: number; outcome: string; response_code: number | null; response_body: string | null; error: string | null }> =
    await db('webhook_delivery_attempts').select('event_id', 'number', 'outcome', 'response_code', 'response_body', 'error').orderBy(['event_id', 'number']);
  const attemptsByEvent = new Map<number, typeof attempts>();
  for (const attempt of attempts) {
    const list = attemptsByEvent.get(attempt.event_id) ?? [];
    list.push(attempt);
    attemptsByEvent.set(attempt.event_id, list);
  }

  const attemptLogProblems: string[] = [];
  for (const event of events) {
    const log = attemptsByEvent.get(event.id) ?? [];
    const numbers = log.map((a) => a.number);
    if (numbers.some((n, i) => n !== i + 1)) attemptLogProblems.push(`event ${event.id}: attempt numbers ${numbers.join(',')}`);
    if (log.length !== event.attempts) attemptLogProblems.push(`event ${event.id}: ${log.length} attempt rows, attempts = ${event.attempts}`);
    const last = log.at(-1);
    if (!FINAL.includes(event.status)) continue;
    if (!last) {
      attemptLogProblems.push(`event ${event.id}: ${event.status} without an attempt`);
      continue;
    }
    if (last.response_code !== event.last_response_code || last.response_body !== event.last_response_body || last.error !== event.last_error) {
      attemptLogProblems.push(`event ${event.id}: last response differs from the last attempt`);
    }
    if ((event.status === 'delivered') !== (last.outcome === 'delivered')) {
      attemptLogProblems.push(`event ${event.id}: status ${event.status} after a ${last.outcome} attempt`);
    }
  }

  const starts: Array<{ event_id: number; n: number }> = await db('webhook_attempt_starts').select('event_id').count({ n: '*' }).groupBy('event_id');
  const startsByEvent = new Map(starts.map((row) => [row.event_id, Number(row.n)]));
  const interruptedAttempts = [...startsByEvent.values()].reduce((sum, n) => sum + n, 0);
  const attemptsBelowRequests = events.flatMap((event) => {
    const logged = (attemptsByEvent.get(event.id)?.length ?? 0) + (startsByEvent.get(event.id) ?? 0);
    const received = subscriber.received.get(event.id) ?? 0;
    return logged < received ? [`event ${event.id}: ${logged} attempts logged, ${received} requests received`] : [];
  });

  const ids = new Set(events.map((e) => e.id));
  const counts = [...subscriber.received.values()];
  return {
    committedEvents: events.length,
    delivered: events.filter((e) => e.status === 'delivered').length,
    maxRetriesReached: events.filter((e) => e.status === 'max_retries_reached').length,
    notFinal: events.filter((e) => !FINAL.includes(e.status)).map((e) => e.id),
    attemptLogProblems,
    deliveredButNotReceived: events.filter((e) => e.status === 'delivered' && !subscriber.received.has(e.id)).map((e) => e.id),
    receivedUnknown: [...subscriber.received.keys()].filter((id) => !ids.has(id)),
    requestsReceived: subscriber.total(),
    duplicateDeliveries: counts.reduce((sum, n) => sum + n - 1, 0),
    eventsDeliveredMoreThanOnce: counts.filter((n) => n > 1).length,
    attemptsLogged: attempts.length + interruptedAttempts,
    interruptedAttempts,
    attemptsBelowRequests,
  };
}

export interface PlatformVerdict {
  /** Calls whose checkout is missing after the drill, although they were retried until they succeeded. */
  missingCheckouts: string[];
  /** Checkouts without their donation, or donations without their event (or with more than one). */
  halfWritten: string[];
  /**
   * What Postgres keeps counted that differs from a recount: contact totals (migrations 011 and 016) against the
   * donations, events by status (migration 024) against the events.
   */
  keptCountsOff: string[];
}

/**
 * Every platform call wrote all of its rows, or none: checkout, its donation, and that donation's one event; and the
 * contact totals and event counts Postgres keeps equal a recount (the drills' donor pays every time, so its totals
 * take every call; every event of the drill changes status at least once).
 */
export async function verifyPlatformWrites(db: Db, transactionIds: string[]): Promise<PlatformVerdict> {
  const rows: Array<{ transaction_id: string; number: string | null; events: number }> = await db('checkouts as c')
    .leftJoin('donations as d', 'd.checkout_id', 'c.id')
    .select('c.transaction_id', 'd.number')
    .select(
      db.raw(`(SELECT count(*)::int FROM webhook_events e WHERE e.source_key = 'donation.completed:donation:' || d.number) AS events`),
    )
    .whereIn('c.transaction_id', transactionIds);
  const found = new Set(rows.map((r) => r.transaction_id));
  const orphanEvents: Array<{ id: number }> = await db('webhook_events as e')
    .select('e.id')
    .whereNotExists(db('donations as d').whereRaw(`e.source_key = 'donation.completed:donation:' || d.number`));
  const { rows: totalsOff } = await db.raw(`
    WITH recount AS (
      SELECT d.contact_id, c.currency, count(*)::int AS positions, count(DISTINCT d.checkout_id)::int AS checkouts,
             sum(d.amount_minor)::bigint AS amount
        FROM donations d JOIN checkouts c ON c.id = d.checkout_id
        JOIN contacts ct ON ct.id = d.contact_id AND ct.environment = d.environment
       GROUP BY 1, 2)
    SELECT coalesce(k.contact_id, r.contact_id) AS contact_id, coalesce(k.currency, r.currency) AS currency,
           k.position_count, r.positions, k.checkout_count, r.checkouts, k.amount_minor, r.amount
      FROM contact_donation_totals k FULL JOIN recount r ON r.contact_id = k.contact_id AND r.currency = k.currency
     WHERE k.contact_id IS NULL OR r.contact_id IS NULL OR k.position_count <> r.positions
        OR k.checkout_count <> r.checkouts OR k.amount_minor <> r.amount`);
  const { rows: eventCountsOff } = await db.raw(`
    WITH kept AS (SELECT status, sum(events)::int AS events FROM webhook_event_counts GROUP BY status),
         recount AS (SELECT status, count(*)::int AS events FROM webhook_events GROUP BY status)
    SELECT coalesce(k.status, r.status) AS status, k.events AS kept, r.events AS recounted
      FROM kept k FULL JOIN recount r ON r.status = k.status
     WHERE coalesce(k.events, 0) <> coalesce(r.events, 0)`);
  return {
    keptCountsOff: [
      ...(totalsOff as Array<Record<string, unknown>>).map((row) => `contact totals ${JSON.stringify(row)} differ from a recount`),
      ...(eventCountsOff as Array<Record<string, unknown>>).map((row) => `events by status ${JSON.stringify(row)} differ from a recount`),
    ],
    missingCheckouts: transactionIds.filter((id) => !found.has(id)),
    halfWritten: [
      ...rows.filter((r) => r.number === null).map((r) => `checkout ${r.transaction_id} without a donation`),
      ...rows.filter((r) => r.number !== null && r.events !== 1).map((r) => `donation ${r.number}: ${r.events} events`),
      ...orphanEvents.map((e) => `event ${e.id} without its donation`),
    ],
  };
}
