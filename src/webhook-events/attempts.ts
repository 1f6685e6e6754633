import type { Knex } from 'knex';
import type { AttemptResult, RecordedProgress } from '../delivery-rules/activity-contracts';
import { DELIVERY_STATUSES, type DeliveryStatus, type FinishedAttempt, statusAfterAttempt } from '../delivery-rules/delivery-status';
import type { EndpointSettings } from '../webhook-endpoint/endpoint-store';
import type { WebhookEventType } from '../webhooks/event-types';
import { preparedStatement, runPrepared } from '../db/prepared-statements';
import { ATTEMPT_STARTS, ATTEMPTS, ENDPOINTS, EVENTS, type WebhookEventRow } from './tables';

/**
 * Delivery attempts, as the delivery activities make them: the event to send with its endpoint, the attempt's start
 * before its POST leaves, the attempt recorded with the event's status transition, and where a delivery stands in
 * Postgres.
 */
/** Where an event's delivery stands after an attempt. */
export interface DeliveryProgress {
  status: DeliveryStatus;
  nextAttemptAt: Date | null;
}

/** The endpoint's settings an attempt uses, read with the event; its secrets as stored (sealed, where they are). */
export type EndpointForAttempt = Pick<EndpointSettings, 'url' | 'active' | 'basic_auth_username' | 'basic_auth_password' | 'signing_secret'>;

export interface EventForAttempt {
  /** The event's key (`uuid`), which the attempt compares with its workflow's owner. */
  key: string;
  eventType: WebhookEventType;
  payload: string;
  /** A test event: sent with the header `webhook-test: 1`. */
  test: boolean;
  endpoint: EndpointForAttempt;
  /** This attempt with the event after it, when it is recorded already: it must not be sent again. */
  recorded: (AttemptResult & DeliveryProgress) | undefined;
}

interface EventForAttemptRow extends EndpointForAttempt {
  uuid: string;
  event_type: WebhookEventType;
  payload: string;
  test: boolean;
  status: DeliveryStatus;
  next_attempt_at: Date | null;
  recorded_outcome: AttemptResult['outcome'] | null;
  recorded_response_code: number | null;
  recorded_error: string | null;
  recorded_started_at: Date;
  recorded_duration_ms: number;
}

/** An attempt about to POST: the start the statement recording its outcome takes back (recordAttempt). */
export interface AttemptStart {
  eventId: number;
  attemptNumber: number;
  manual: boolean;
  /** The attempt's `startedAtMs`: with the event and number, which start its outcome replaces. */
  startedAt: Date;
  /**
   * The event key the attempt's workflow carries (its owner), if any: the start is written only for the event of
   * that key, never for another event of the same id.
   */
  eventKey: string | null;
}

const START_ATTEMPT = preparedStatement(
  'start-attempt',
  `WITH found AS (
     SELECT p.url, p.active, p.basic_auth_username, p.basic_auth_password, p.signing_secret,
            e.uuid, e.event_type, e.payload, e.test, e.status, e.next_attempt_at,
            a.outcome AS recorded_outcome, a.response_code AS recorded_response_code, a.error AS recorded_error,
            a.started_at AS recorded_started_at, a.duration_ms AS recorded_duration_ms
       FROM ${EVENTS} AS e
       JOIN ${ENDPOINTS} AS p ON p.id = e.endpoint_id
       LEFT JOIN ${ATTEMPTS} AS a ON a.event_id = e.id AND a.number = $2
      WHERE e.id = $1
   ), own AS (
     SELECT * FROM found WHERE $5::text IS NULL OR found.uuid::text = $5::text
   ), started AS (
     INSERT INTO ${ATTEMPT_STARTS} (event_id, number, manual, started_at)
     SELECT $1, $2, $3, $4 FROM own WHERE own.active AND own.recorded_outcome IS NULL
   ), begun AS (
     UPDATE ${EVENTS} SET workflow_started_at = now() WHERE id = $1 AND workflow_started_at IS NULL AND EXISTS (SELECT 1 FROM own)
   )
   SELECT * FROM found`,
);

/**
 * The event to send, its endpoint as configured now, and whether this attempt number is recorded already; and, in
 * the same round trip, the attempt's start, written before the request leaves: should its worker be lost before the
 * outcome is recorded, the start stays, and the admin shows an interrupted attempt whose request the subscriber may
 * have received. The start is written only where the attempt is to POST: the event is `start.eventKey`'s, its endpoint
 * is switched on, and this attempt number is not recorded yet. Where the endpoint's stored secrets then cannot be
 * opened (nothing is sent), the failed outcome recorded for the attempt takes the start back like any other.
 *
 * The first attempt of the event's own workflow also marks its delivery started (`workflow_started_at`): the outbox
 * relay leaves that to it for a workflow it started eagerly, which saves the relay a statement per event
 * (src/temporal/outbox-relay.ts).
 */
export async function startAttempt(db: Knex, start: AttemptStart): Promise<EventForAttempt | undefined> {
  const [row] = await runPrepared<EventForAttemptRow>(db, START_ATTEMPT, [
    start.eventId,
    start.attemptNumber,
    start.manual,
    start.startedAt,
    start.eventKey,
  ]);
  if (!row) return undefined;
  return {
    key: row.uuid,
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

// $1 attempt number, $2 manual, $3 started at, $4 duration, $5 response code, $6 response body, $7 error, $8 outcome,
// $9 event id, $10 the next attempt's time should a scheduled attempt fail, $11… the status after this attempt for
// each status the row may have when it is locked (DELIVERY_STATUSES' order).
const newStatus = `CASE e.status ${DELIVERY_STATUSES.map((current, index) => `WHEN '${current}' THEN $${11 + index}`).join(' ')} END`;
const RECORD_ATTEMPT = preparedStatement(
  'record-attempt',
  `WITH attempt AS (
     INSERT INTO ${ATTEMPTS} (event_id, number, manual, started_at, duration_ms, response_code, response_body, error, outcome)
     SELECT id, $1, $2, $3, $4, $5, $6, $7, $8 FROM ${EVENTS} WHERE id = $9
     ON CONFLICT (event_id, number) DO NOTHING
     RETURNING event_id
   ), started AS (
     DELETE FROM ${ATTEMPT_STARTS}
     WHERE id = (SELECT max(id) FROM ${ATTEMPT_STARTS} WHERE event_id = $9 AND number = $1 AND started_at = $3)
       AND EXISTS (SELECT FROM attempt)
   )
   UPDATE ${EVENTS} AS e SET
     status = ${newStatus},
     attempts = e.attempts + 1,
     last_response_code = $5,
     last_response_body = $6,
     last_error = $7,
     next_attempt_at = CASE ${newStatus} WHEN 'failed' THEN CASE WHEN $2 THEN e.next_attempt_at ELSE $10::timestamptz END END,
     delivered_at = CASE WHEN $8 = 'delivered' THEN $3::timestamptz + $4 * interval '1 millisecond' ELSE e.delivered_at END,
     updated_at = now()
   FROM attempt WHERE e.id = attempt.event_id
   RETURNING e.status, e.next_attempt_at`,
);

/**
 * Writes the attempt row and the event's status transition in one statement, so one round trip: the insert and the
 * update happen together or not at all. The transition is the pure rule (statusAfterAttempt) worked out in advance for
 * every status the event may be in, and Postgres picks the one for the status it finds when it locks the row (also
 * when another transaction changed it meanwhile). A next attempt is due the pause after this attempt's outcome; a
 * manual attempt leaves the time already scheduled. The same statement deletes the attempt's start
 * (startAttempt), only when it writes the row: a start whose attempt number another execution recorded first
 * (two executions of one attempt) stays, as interrupted, so that every request sent keeps a row. Idempotent per
 * (event, attempt number): a retried write changes nothing and answers the event as it stands. Undefined for an
 * unknown event.
 */
export async function recordAttempt(db: Knex, record: AttemptToRecord): Promise<RecordedAttempt | undefined> {
  const { eventId, attemptNumber, attempt, result, responseBody, retryDelayMs } = record;
  const startedAt = new Date(result.startedAtMs);
  const outcomeAtMs = result.startedAtMs + result.durationMs;
  const rows = await runPrepared<Pick<WebhookEventRow, 'status' | 'next_attempt_at'>>(db, RECORD_ATTEMPT, [
    ...[attemptNumber, attempt.kind === 'manual', startedAt, result.durationMs, result.responseCode, responseBody, result.error, result.outcome],
    eventId,
    attempt.kind === 'manual' || retryDelayMs === null ? null : new Date(outcomeAtMs + retryDelayMs),
    ...DELIVERY_STATUSES.map((current) => statusAfterAttempt(current, attempt)),
  ]);
  if (rows.length > 0) return { status: rows[0].status, nextAttemptAt: rows[0].next_attempt_at, written: true };
  // Not written: the event is unknown, or this attempt number was recorded before (a retried write).
  const event: Pick<WebhookEventRow, 'status' | 'next_attempt_at'> | undefined = await db(EVENTS).where({ id: eventId }).first('status', 'next_attempt_at');
  return event && { status: event.status, nextAttemptAt: event.next_attempt_at, written: false };
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
