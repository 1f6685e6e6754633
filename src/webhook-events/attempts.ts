import type { Knex } from 'knex';
import pg from 'pg';
import type { PayloadVersion } from '../webhooks/payload-versions';
import { type AttemptOutcome, DELIVERY_STATUSES, type DeliveryStatus, type FinishedAttempt, statusAfterAttempt } from '../delivery-rules/delivery-status';
import type { DeliveryFacts } from '../delivery-rules/delivery-texts';
import type { EventIdentity } from '../delivery-rules/event-identity';
import type { RetentionBatchResult } from '../delivery-rules/retention';
import type { EndpointSettings } from '../webhook-endpoint/endpoint-store';
import type { WebhookEventType } from '../webhooks/event-types';
import { type EventSearchKeys, normalisedEmail, searchKeysOf } from '../webhooks/event-search-keys';

/**
 * The store of the delivery aggregate: webhook events (the outbox rows, with their delivery status) and their
 * delivery attempts. The only module that knows these two tables; everything else calls these functions.
 */
const EVENTS = 'webhook_events';
const ATTEMPTS = 'webhook_delivery_attempts';
const ENDPOINTS = 'webhook_endpoints';
/** The donation, checkout and order numbers each event is about: what the admin finds it by (migration 014). */
const REFERENCES = 'webhook_event_references';
/** Channel of the insert trigger of migration 008 (kept literal there: migrations do not change with the code). */
const EVENT_INSERTED_CHANNEL = 'webhook_event_inserted';

/** A row of webhook_events, with the keys the admin searches it by (written with the event). */
export interface WebhookEventRow extends Omit<EventSearchKeys, 'references'> {
  id: number;
  endpoint_id: number;
  event_type: WebhookEventType;
  payload_version: PayloadVersion;
  source_key: string;
  /** The envelope exactly as sent; normally JSON, but shown as text when it is not. Empty once dropped. */
  payload: string;
  /** A test event sent from the admin page (sent with `webhook-test: 1`). */
  test: boolean;
  /** When retention dropped the payload and the response bodies; null while they are kept. */
  payload_dropped_at: Date | null;
  status: DeliveryStatus;
  /** Attempts made, scheduled and manual alike. */
  attempts: number;
  last_response_code: number | null;
  last_response_body: string | null;
  last_error: string | null;
  /** While `failed` with a scheduled attempt still due: when it is due. */
  next_attempt_at: Date | null;
  delivered_at: Date | null;
  /** Set by the relay once the delivery workflow is started; null while the event waits in the outbox. */
  workflow_started_at: Date | null;
  /** The event's random key, carried in its workflows' memo (migration 017). */
  uuid: string;
  /** Its delivery workflow's id (set on insert; `webhook-event-<id>` for events started before migration 017). */
  workflow_id: string;
  created_at: Date;
  updated_at: Date;
}

/** A row of webhook_delivery_attempts: one HTTP POST (or one refusal to send) and what came of it. */
export interface DeliveryAttemptRow {
  id: number;
  event_id: number;
  /** 1, 2, … over scheduled and manual attempts alike; unique per event, which makes recording idempotent. */
  number: number;
  manual: boolean;
  started_at: Date;
  duration_ms: number;
  response_code: number | null;
  response_body: string | null;
  error: string | null;
  outcome: AttemptOutcome;
}

// --- Creating events (the outbox), inside the platform's transaction ---

export type NewWebhookEvent = Pick<
  WebhookEventRow,
  'id' | 'endpoint_id' | 'event_type' | 'payload_version' | 'source_key' | 'payload' | 'created_at'
> &
  Partial<Pick<WebhookEventRow, 'test'>>;

/** Reserves the id of an event about to be written: its envelope, rendered before the insert, carries it. */
export async function reserveEventId(trx: Knex.Transaction): Promise<number> {
  const {
    rows: [{ id }],
  } = await trx.raw<{ rows: { id: string }[] }>(`SELECT nextval(pg_get_serial_sequence('${EVENTS}', 'id')) AS id`);
  return Number(id);
}

/**
 * Writes a new event, status waiting, with the keys the admin searches it by; answers its workflow id (given by
 * the insert trigger of migration 017). Undefined when an event of the same `source_key` exists (a repeated cause).
 */
export async function insertEvent(trx: Knex.Transaction, event: NewWebhookEvent): Promise<{ workflowId: string } | undefined> {
  const { references, ...keys } = searchKeysOf(event.payload);
  const [inserted]: Array<Pick<WebhookEventRow, 'workflow_id'>> = await trx(EVENTS)
    .insert({ ...event, ...keys, status: 'waiting', updated_at: event.created_at })
    .onConflict('source_key')
    .ignore()
    .returning('workflow_id');
  if (!inserted) return undefined;
  if (references.length > 0) await trx(REFERENCES).insert(references.map((reference) => ({ reference, event_id: event.id })));
  return { workflowId: inserted.workflow_id };
}

// --- Starting deliveries (the relay) ---

interface DeliveryFactsRow {
  id: number;
  uuid: string;
  workflow_id: string;
  event_type: WebhookEventType;
  payload_version: PayloadVersion;
  payload: string;
  url: string;
}

const DELIVERY_FACTS_COLUMNS = ['e.id', 'e.uuid', 'e.workflow_id', 'e.event_type', 'e.payload_version', 'e.payload', 'p.url'];

/** The first `transaction_id` in the payload's data, wherever its event type keeps it. */
function findTransactionId(value: unknown): string | null {
  if (value === null || typeof value !== 'object') return null;
  const record = value as Record<string, unknown>;
  if (typeof record.transaction_id === 'string') return record.transaction_id;
  for (const child of Object.values(record)) {
    const found = findTransactionId(child);
    if (found !== null) return found;
  }
  return null;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

function deliveryFactsOf(row: DeliveryFactsRow): DeliveryFacts {
  let envelope: { environment?: unknown; data?: unknown } = {};
  try {
    envelope = JSON.parse(row.payload) as typeof envelope;
  } catch {
    // A payload that is not JSON is still delivered as stored; it just says nothing more about itself.
  }
  return {
    eventId: row.id,
    eventType: row.event_type,
    payloadVersion: row.payload_version,
    subscriberHost: hostOf(row.url),
    environment: typeof envelope.environment === 'string' ? envelope.environment : null,
    transactionId: findTransactionId(envelope.data),
  };
}

const identityOf = (row: Pick<DeliveryFactsRow, 'id' | 'uuid' | 'workflow_id'>): EventIdentity => ({
  eventId: row.id,
  key: row.uuid,
  workflowId: row.workflow_id,
});

/** An event whose delivery is to be started: what it is about, and who it is. */
export interface EventToStart {
  facts: DeliveryFacts;
  identity: EventIdentity;
}

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
     RETURNING *`,
    [claimMs, batchSize],
  );
  const rows: Array<DeliveryFactsRow & { claimed_at: string }> = await db
    .with('claimed', claim)
    .from('claimed as e')
    .join(`${ENDPOINTS} as p`, 'p.id', 'e.endpoint_id')
    .select([...DELIVERY_FACTS_COLUMNS, db.raw('e.relay_claimed_at::text AS claimed_at')])
    .orderBy('e.id');
  return { events: rows.map((row) => ({ facts: deliveryFactsOf(row), identity: identityOf(row) })), claimedAt: rows[0]?.claimed_at ?? null };
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

/**
 * Shows why an event's delivery could not be started or resumed (a workflow id conflict) as its `last_error`, where
 * the admin page and API show it. Its status and attempts stay; the next attempt it records replaces the text.
 */
export async function recordDeliveryProblem(db: Knex, eventId: number, problem: string): Promise<void> {
  await db(EVENTS).where({ id: eventId }).update({ last_error: problem, updated_at: db.fn.now() });
}

/** Where an event's delivery stands, with what its workflow is started with (for a resend, or a test). */
export interface EventDelivery extends EventToStart {
  status: DeliveryStatus;
  attempts: number;
  /** Retention dropped its payload: there is nothing left to send. */
  payloadDropped: boolean;
}

type EventDeliveryRow = DeliveryFactsRow & Pick<WebhookEventRow, 'status' | 'attempts' | 'payload_dropped_at'>;
const EVENT_DELIVERY_COLUMNS = [...DELIVERY_FACTS_COLUMNS, 'e.status', 'e.attempts', 'e.payload_dropped_at'];

const eventDeliveryOf = (row: EventDeliveryRow): EventDelivery => ({
  status: row.status,
  attempts: row.attempts,
  facts: deliveryFactsOf(row),
  identity: identityOf(row),
  payloadDropped: row.payload_dropped_at !== null,
});

const eventDeliveryQuery = (db: Knex, id: number) =>
  db(`${EVENTS} as e`).join(`${ENDPOINTS} as p`, 'p.id', 'e.endpoint_id').where('e.id', id).first(EVENT_DELIVERY_COLUMNS);

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
     RETURNING *`,
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

export async function findEventDelivery(db: Knex, id: number): Promise<EventDelivery | undefined> {
  const row: EventDeliveryRow | undefined = await eventDeliveryQuery(db, id);
  return row && eventDeliveryOf(row);
}

/**
 * Runs `use` with the event read and its row share-locked until `use` returns (undefined: no such event). A resend
 * hands its request to Temporal inside: the retention purge skips rows locked this way and asks Temporal about the
 * rest, so it never deletes an event (or drops its payload) whose resend is being requested or is running.
 */
export async function withEventHeldForResend<T>(db: Knex, id: number, use: (event: EventDelivery | undefined) => Promise<T>): Promise<T> {
  return db.transaction(async (trx) => {
    const row: EventDeliveryRow | undefined = await eventDeliveryQuery(trx, id).forShare('e');
    return use(row && eventDeliveryOf(row));
  });
}

export interface EventListener {
  /** Safe at any time, also after the connection was lost. */
  close(): Promise<void>;
}

/**
 * Calls `onInserted` whenever a transaction that inserted events commits (NOTIFY from the insert trigger), on a
 * connection of its own; `onLost` when that connection fails, after which it is closed.
 */
export async function listenForNewEvents(db: Knex, onInserted: () => void, onLost: (err: Error) => void): Promise<EventListener> {
  const connection = new pg.Client(db.client.connectionSettings as pg.ClientConfig);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await connection.end().catch(() => undefined);
  };
  connection.on('notification', onInserted);
  connection.on('error', (err) => {
    void close();
    onLost(err);
  });
  try {
    await connection.connect();
    await connection.query(`LISTEN ${EVENT_INSERTED_CHANNEL}`);
  } catch (err) {
    await close();
    throw err;
  }
  return { close };
}

// --- Making attempts (the activities) ---

/** An attempt as workflow history and the status rows describe it; its response body lives only in Postgres. */
export interface AttemptResult {
  outcome: AttemptOutcome;
  responseCode: number | null;
  error: string | null;
  startedAtMs: number;
  durationMs: number;
}

/** Where an event's delivery stands after an attempt. */
export interface DeliveryProgress {
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
}

/** The endpoint's settings an attempt uses, read with the event; its secrets as stored (sealed, where they are). */
export type EndpointForAttempt = Pick<EndpointSettings, 'url' | 'active' | 'basic_auth_username' | 'basic_auth_password' | 'signing_secret'>;

export interface EventForAttempt {
  eventType: WebhookEventType;
  payload: string;
  /** A test event: sent with the header `webhook-test: 1`. */
  test: boolean;
  endpoint: EndpointForAttempt;
  /** This attempt with the event after it, when it is recorded already: it must not be sent again. */
  recorded: (AttemptResult & DeliveryProgress) | undefined;
}

/**
 * The event to send, its endpoint as configured now, and whether this attempt number is recorded already, in one
 * round trip.
 */
export async function findEventForAttempt(db: Knex, eventId: number, attemptNumber: number): Promise<EventForAttempt | undefined> {
  const row = await db(`${EVENTS} as e`)
    .join(`${ENDPOINTS} as p`, 'p.id', 'e.endpoint_id')
    .leftJoin(`${ATTEMPTS} as a`, (join) => join.on('a.event_id', 'e.id').andOnVal('a.number', attemptNumber))
    .where('e.id', eventId)
    .first(
      'p.url',
      'p.active',
      'p.basic_auth_username',
      'p.basic_auth_password',
      'p.signing_secret',
      'e.event_type',
      'e.payload',
      'e.test',
      'e.status',
      'e.next_attempt_at',
      'a.outcome as recorded_outcome',
      'a.response_code as recorded_response_code',
      'a.error as recorded_error',
      'a.started_at as recorded_started_at',
      'a.duration_ms as recorded_duration_ms',
    );
  if (!row) return undefined;
  return {
    eventType: row.event_type,
    payload: row.payload,
    test: row.test,
    endpoint: {
      url: row.url,
      active: row.active,
      basic_auth_username: row.basic_auth_username,
      basic_auth_password: row.basic_auth_password,
      signing_secret: row.signing_secret,
    },
    recorded: row.recorded_outcome
      ? {
          outcome: row.recorded_outcome,
          responseCode: row.recorded_response_code,
          error: row.recorded_error,
          startedAtMs: row.recorded_started_at.getTime(),
          durationMs: row.recorded_duration_ms,
          status: row.status,
          nextAttemptAt: row.next_attempt_at,
        }
      : undefined,
  };
}

export interface AttemptToRecord {
  eventId: number;
  attemptNumber: number;
  attempt: FinishedAttempt;
  result: AttemptResult;
  /** What the subscriber answered (16 KiB at most); null when there was no answer, or it was not kept. */
  responseBody: string | null;
  /**
   * For a scheduled attempt, the schedule's pause before the next one should this one fail (null after the last).
   * A manual attempt leaves the time already scheduled.
   */
  retryDelayMs: number | null;
}

export interface RecordedAttempt extends DeliveryProgress {
  /** False when this attempt number was recorded before (a retried write): nothing was changed. */
  written: boolean;
}

/**
 * Writes the attempt row and the event's status transition in one statement, so one round trip: the insert and the
 * update happen together or not at all. The transition is the pure rule (statusAfterAttempt) worked out in advance for
 * every status the event may be in, and Postgres picks the one for the status it finds when it locks the row (also
 * when another transaction changed it meanwhile). A next attempt is due the pause after this attempt's outcome; a
 * manual attempt leaves the time already scheduled. Idempotent per (event, attempt number): a retried write changes
 * nothing and answers the event as it stands. Undefined for an unknown event.
 */
export async function recordAttempt(db: Knex, record: AttemptToRecord): Promise<RecordedAttempt | undefined> {
  const { eventId, attemptNumber, attempt, result, responseBody, retryDelayMs } = record;
  const outcomeAt = new Date(result.startedAtMs + result.durationMs);
  // The status after this attempt, for the status the row has when it is locked.
  const newStatus = db.raw(`CASE e.status ${DELIVERY_STATUSES.map(() => 'WHEN ? THEN ?').join(' ')} END`, [
    ...DELIVERY_STATUSES.flatMap((current) => [current, statusAfterAttempt(current, attempt)]),
  ]);
  const nextWhileFailed =
    attempt.kind === 'manual'
      ? db.raw('e.next_attempt_at')
      : db.raw('?::timestamptz', [retryDelayMs === null ? null : new Date(outcomeAt.getTime() + retryDelayMs)]);
  const { rows } = await db.raw<{ rows: Array<Pick<WebhookEventRow, 'status' | 'next_attempt_at'>> }>(
    `WITH attempt AS (
       INSERT INTO ${ATTEMPTS} (event_id, number, manual, started_at, duration_ms, response_code, response_body, error, outcome)
       SELECT id, ?, ?, ?, ?, ?, ?, ?, ? FROM ${EVENTS} WHERE id = ?
       ON CONFLICT (event_id, number) DO NOTHING
       RETURNING event_id
     )
     UPDATE ${EVENTS} AS e SET
       status = ?,
       attempts = e.attempts + 1,
       last_response_code = ?,
       last_response_body = ?,
       last_error = ?,
       next_attempt_at = CASE ? WHEN 'failed' THEN ? END,
       delivered_at = ?,
       updated_at = now()
     FROM attempt WHERE e.id = attempt.event_id
     RETURNING e.status, e.next_attempt_at`,
    [
      ...[attemptNumber, attempt.kind === 'manual', new Date(result.startedAtMs), result.durationMs],
      ...[result.responseCode, responseBody, result.error, result.outcome, eventId],
      newStatus,
      ...[result.responseCode, responseBody, result.error],
      newStatus,
      nextWhileFailed,
      result.outcome === 'delivered' ? outcomeAt : db.raw('e.delivered_at'),
    ],
  );
  if (rows.length > 0) return { status: rows[0].status, nextAttemptAt: rows[0].next_attempt_at, written: true };
  // Not written: the event is unknown, or this attempt number was recorded before (a retried write).
  const event: Pick<WebhookEventRow, 'status' | 'next_attempt_at'> | undefined = await db(EVENTS).where({ id: eventId }).first('status', 'next_attempt_at');
  return event && { status: event.status, nextAttemptAt: event.next_attempt_at, written: false };
}

/** Where a delivery stands in Postgres, for a workflow that resends after the delivery workflow ended. */
export interface RecordedProgress {
  status: DeliveryStatus;
  attempts: number;
  /** Number of the last manual attempt (0: none): the last one that answered a resend request. */
  lastManualAttempt: number;
}

/** Where a delivery stands with its schedule, for a run that goes on from there after its workflow was lost. */
export interface RecordedProgressWithSchedule extends RecordedProgress {
  /** Scheduled (not manual) attempts made: the schedule goes on with the next one. */
  scheduledAttempts: number;
  nextAttemptAt: Date | null;
}

export async function findRecordedProgress(db: Knex, eventId: number): Promise<RecordedProgressWithSchedule | undefined> {
  const attempts = (manual: boolean) => db(ATTEMPTS).where({ event_id: eventId, manual });
  const row = await db(EVENTS)
    .where({ id: eventId })
    .first(
      'status',
      'attempts',
      'next_attempt_at',
      attempts(true).max('number').as('last_manual_attempt'),
      attempts(false).count('*').as('scheduled_attempts'),
    );
  return (
    row && {
      status: row.status,
      attempts: row.attempts,
      lastManualAttempt: row.last_manual_attempt ?? 0,
      scheduledAttempts: Number(row.scheduled_attempts),
      nextAttemptAt: row.next_attempt_at,
    }
  );
}

// --- Reading events (admin API) ---

export interface EventFilters {
  status?: DeliveryStatus;
  event?: WebhookEventType;
  /** The payment's transaction id, exactly. */
  transactionId?: string;
  /** A donation, checkout or order number the event is about (a position's number finds its checkout's event). */
  reference?: string;
  /** The donor's, subscriber's or customer's e-mail, without regard to case. */
  email?: string;
  /** Created at or after. */
  createdFrom?: Date;
  /** Created before. */
  createdTo?: Date;
  /** Only events stuck at this cutoff (whereStuck, below). */
  stuckBefore?: Date;
}

/** The columns of the event list: everything but the payload and the last error. */
export type EventSummaryRow = Pick<
  WebhookEventRow,
  | 'id'
  | 'event_type'
  | 'created_at'
  | 'status'
  | 'attempts'
  | 'last_response_code'
  | 'last_response_body'
  | 'next_attempt_at'
  | 'delivered_at'
  | 'test'
  | 'workflow_started_at'
>;

const SUMMARY_COLUMNS = [
  'id',
  'event_type',
  'created_at',
  'status',
  'attempts',
  'last_response_code',
  'last_response_body',
  'next_attempt_at',
  'delivered_at',
  'test',
  'workflow_started_at',
] as const satisfies readonly (keyof EventSummaryRow)[];

/** The events the filters select (each one indexed: docs/admin.md shows the plans). */
function filteredEvents(db: Knex, filters: EventFilters) {
  const query = db(EVENTS);
  if (filters.status) query.where('status', filters.status);
  if (filters.event) query.where('event_type', filters.event);
  if (filters.transactionId !== undefined) query.where('transaction_id', filters.transactionId);
  if (filters.reference !== undefined) query.whereIn('id', db(REFERENCES).select('event_id').where('reference', filters.reference));
  if (filters.email !== undefined) query.where('donor_email', normalisedEmail(filters.email));
  if (filters.createdFrom) query.where('created_at', '>=', filters.createdFrom);
  if (filters.createdTo) query.where('created_at', '<', filters.createdTo);
  if (filters.stuckBefore) whereStuck(query, filters.stuckBefore);
  return query;
}

/** One page of the events the filters select, newest first, with the total count. */
export async function listEvents(
  db: Knex,
  filters: EventFilters,
  page: { limit: number; offset: number },
): Promise<{ count: number; rows: EventSummaryRow[] }> {
  const [[{ count }], rows] = await Promise.all([
    filteredEvents(db, filters).count<{ count: string }[]>({ count: '*' }),
    filteredEvents(db, filters)
      .select(SUMMARY_COLUMNS)
      // Newest first by creation (ids follow it), so that a created range is read from its index in order.
      .orderBy([
        { column: 'created_at', order: 'desc' },
        { column: 'id', order: 'desc' },
      ])
      .limit(page.limit)
      .offset(page.offset) as Promise<EventSummaryRow[]>,
  ]);
  return { count: Number(count), rows };
}

/** One event with every attempt, oldest first; undefined when unknown. */
export async function findEventWithAttempts(
  db: Knex,
  id: number,
): Promise<{ event: WebhookEventRow; attempts: DeliveryAttemptRow[] } | undefined> {
  const [event, attempts] = await Promise.all([
    db(EVENTS).where({ id }).first() as Promise<WebhookEventRow | undefined>,
    db(ATTEMPTS).where({ event_id: id }).orderBy('number') as Promise<DeliveryAttemptRow[]>,
  ]);
  return event && { event, attempts };
}

// --- Bulk recovery (admin API and the recovery workflow) ---

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

// --- Retention (the purge workflow's activities) ---

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
      // Its numbers (webhook_event_references) go with it (ON DELETE CASCADE).
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

// --- Delivery health (admin page) ---

export interface AttemptsInHour {
  hour: Date;
  delivered: number;
  failed: number;
}

export interface AttemptStatistics {
  /** Attempts in the period, per hour (hours without attempts left out), oldest first. */
  hours: AttemptsInHour[];
  attempts: number;
  delivered: number;
  /** Median and 95th percentile of the attempts' durations; null without attempts. */
  medianMs: number | null;
  p95Ms: number | null;
  /** When the last successful attempt (ever) started. */
  lastDeliveredAt: Date | null;
}

/** Delivery attempts started in [from, to): per hour and outcome, their duration percentiles, and the last success. */
export async function attemptStatistics(db: Knex, from: Date, to: Date): Promise<AttemptStatistics> {
  const inPeriod = () => db(ATTEMPTS).where('started_at', '>=', from).where('started_at', '<', to);
  const [hours, [totals], lastDelivered] = await Promise.all([
    inPeriod()
      .select(db.raw("date_trunc('hour', started_at, 'UTC') AS hour"))
      .select(db.raw("count(*) FILTER (WHERE outcome = 'delivered')::int AS delivered"))
      .select(db.raw("count(*) FILTER (WHERE outcome = 'failed')::int AS failed"))
      .groupByRaw('1')
      .orderByRaw('1') as Promise<AttemptsInHour[]>,
    inPeriod().select(
      db.raw('count(*)::int AS attempts'),
      db.raw("count(*) FILTER (WHERE outcome = 'delivered')::int AS delivered"),
      db.raw('percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS median_ms'),
      db.raw('percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95_ms'),
    ) as Promise<Array<{ attempts: number; delivered: number; median_ms: number | null; p95_ms: number | null }>>,
    db(ATTEMPTS).where('outcome', 'delivered').max<{ max: Date | null }>('started_at as max').first(),
  ]);
  return {
    hours,
    attempts: totals.attempts,
    delivered: totals.delivered,
    medianMs: totals.median_ms,
    p95Ms: totals.p95_ms,
    lastDeliveredAt: lastDelivered?.max ?? null,
  };
}

// --- Counting (metrics) ---

/** Events per delivery status. */
export async function countEventsByStatus(db: Knex): Promise<Map<string, number>> {
  const rows = await db(EVENTS).select('status').count<Array<{ status: string; count: string }>>({ count: '*' }).groupBy('status');
  return new Map(rows.map((row) => [row.status, Number(row.count)]));
}

// These two read the partial index of unstarted events, which the relay keeps small.

/** Events whose delivery workflow the relay has not started yet. */
export async function countUnstartedEvents(db: Knex): Promise<number> {
  const [row] = await db(EVENTS).whereNull('workflow_started_at').count<Array<{ count: string }>>({ count: '*' });
  return Number(row.count);
}

/** Age in seconds of the oldest event still waiting for the relay; 0 when none waits. */
export async function oldestUnstartedEventAgeSeconds(db: Knex): Promise<number> {
  const { rows } = await db.raw<{ rows: Array<{ age: number }> }>(
    `SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age FROM ${EVENTS} WHERE workflow_started_at IS NULL`,
  );
  return Number(rows[0].age);
}

// --- Stuck events (the rule of src/delivery-rules/stuck-events.ts, in SQL; admin filter and metric) ---

/**
 * `dueSince` of src/delivery-rules/stuck-events.ts as Postgres computes it; test/webhooks/stuck-events.test.ts holds
 * the two to the same answers. The status condition lets the `(status, id)` index find the few candidates.
 */
const DUE_SINCE_SQL = `CASE WHEN status = 'waiting' AND attempts = 0 THEN coalesce(workflow_started_at, created_at) WHEN status = 'failed' THEN next_attempt_at END`;

/** Narrows `query` (on webhook_events) to the events stuck at `stuckBefore` (stuckCutoff). */
export function whereStuck(query: Knex.QueryBuilder, stuckBefore: Date): Knex.QueryBuilder {
  return query.whereIn('status', ['waiting', 'failed']).whereRaw(`${DUE_SINCE_SQL} < ?`, [stuckBefore]);
}

/** Stuck events per status (waiting, failed), for the metric. */
export async function countStuckEvents(db: Knex, stuckBefore: Date): Promise<Map<string, number>> {
  const rows = await whereStuck(db(EVENTS), stuckBefore).select('status').count<Array<{ status: string; count: string }>>({ count: '*' }).groupBy('status');
  return new Map(rows.map((row) => [row.status, Number(row.count)]));
}
