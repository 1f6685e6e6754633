import type { Knex } from 'knex';
import type { DeliveryStatus } from '../delivery-rules/delivery-status';
import { normalisedEmail } from '../webhooks/event-search-keys';
import type { WebhookEventType } from '../webhooks/event-types';
import { whereStuck } from './stuck-condition';
import { ATTEMPT_STARTS, ATTEMPTS, type DeliveryAttemptRow, EVENTS, REFERENCES, type WebhookEventRow } from './tables';

/**
 * What the admin API reads of events: a page of those the filters select (status, type, the numbers and e-mail they
 * are about, creation time, stuck), and one event with its attempts.
 */

/**
 * Whether the attempt start `s` (of event `e`) was interrupted: its attempt number has an outcome (numbers 1 to
 * `attempts` have), or a later start of the event followed it (Temporal ran the attempt again). Otherwise it is the
 * newest start and may still be under way. An interrupted start's worker was lost before the outcome was recorded.
 */
const interruptedStart = (s: string, e: string) =>
  `(${s}.number <= ${e}.attempts OR EXISTS (SELECT FROM ${ATTEMPT_STARTS} later WHERE later.event_id = ${s}.event_id AND later.id > ${s}.id))`;

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
> & {
  /** Attempts started and interrupted before their outcome was recorded: not among `attempts`. */
  interrupted_attempts: number;
};

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

/** `interrupted_attempts` of the events a query on EVENTS (not aliased) selects. */
const INTERRUPTED_ATTEMPTS = `(SELECT count(*)::int FROM ${ATTEMPT_STARTS} s WHERE s.event_id = ${EVENTS}.id AND ${interruptedStart('s', EVENTS)}) AS interrupted_attempts`;

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
      .select(...SUMMARY_COLUMNS, db.raw(INTERRUPTED_ATTEMPTS))
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

/**
 * An attempt as the admin sees it: recorded with its outcome, or started without one (outcome, duration and answer
 * null): interrupted, or the newest start, still under way.
 */
export type AttemptLogRow = Pick<DeliveryAttemptRow, 'number' | 'manual' | 'started_at' | 'response_code' | 'response_body' | 'error'> & {
  duration_ms: number | null;
  outcome: DeliveryAttemptRow['outcome'] | null;
  interrupted: boolean;
};

/**
 * One event with every attempt, recorded and started, by number and start (an interrupted start before the attempt
 * that ran its number again); undefined when unknown. The attempts come in one statement, so that an attempt whose
 * outcome is recorded meanwhile shows once, as one or the other.
 */
export async function findEventWithAttempts(db: Knex, id: number): Promise<{ event: WebhookEventRow; attempts: AttemptLogRow[] } | undefined> {
  const [event, { rows: attempts }] = await Promise.all([
    db(EVENTS).where({ id }).first() as Promise<WebhookEventRow | undefined>,
    db.raw<{ rows: AttemptLogRow[] }>(
      `SELECT number, manual, started_at, duration_ms, response_code, response_body, error, outcome, false AS interrupted
         FROM ${ATTEMPTS} WHERE event_id = ?
       UNION ALL
       SELECT s.number, s.manual, s.started_at, NULL, NULL, NULL, NULL, NULL, ${interruptedStart('s', 'e')}
         FROM ${ATTEMPT_STARTS} s JOIN ${EVENTS} e ON e.id = s.event_id WHERE s.event_id = ?
       ORDER BY number, started_at`,
      [id, id],
    ),
  ]);
  return event && { event, attempts };
}
