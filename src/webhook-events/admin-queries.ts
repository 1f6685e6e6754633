import type { Knex } from 'knex';
import type { DeliveryStatus } from '../delivery-rules/delivery-status';
import { normalisedEmail } from '../webhooks/event-search-keys';
import type { WebhookEventType } from '../webhooks/event-types';
import { whereStuck } from './stuck-condition';
import { ATTEMPTS, type DeliveryAttemptRow, EVENTS, REFERENCES, type WebhookEventRow } from './tables';

/**
 * What the admin API reads of events: a page of those the filters select (status, type, the numbers and e-mail they
 * are about, creation time, stuck), and one event with its attempts.
 */

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
