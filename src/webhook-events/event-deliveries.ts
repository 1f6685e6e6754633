import type { Knex } from 'knex';
import type { DeliveryStatus } from '../delivery-rules/delivery-status';
import type { DeliveryFacts } from '../delivery-rules/delivery-texts';
import type { EventIdentity } from '../delivery-rules/event-identity';
import type { StoredTraceContext } from '../tracing';
import { ENDPOINTS, EVENTS, type WebhookEventRow } from './tables';

/**
 * An event as its delivery workflow is started, resumed or handed a resend: what it is about (its facts, with the
 * subscriber's host), who it is (its identity) and where its delivery stands. The relay's and the sweep's claims
 * read events in this shape too.
 */

export type DeliveryFactsRow = Pick<
  WebhookEventRow,
  'id' | 'uuid' | 'workflow_id' | 'event_type' | 'payload_version' | 'environment' | 'transaction_id' | 'trace_context'
> & { url: string };

/** Columns only: the payload is not read to describe its delivery (its facts were stored with it). */
export const DELIVERY_FACTS_COLUMNS = [
  'e.id',
  'e.uuid',
  'e.workflow_id',
  'e.event_type',
  'e.payload_version',
  'e.environment',
  'e.transaction_id',
  'e.trace_context',
  'p.url',
];

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

const deliveryFactsOf = (row: DeliveryFactsRow): DeliveryFacts => ({
  eventId: row.id,
  eventType: row.event_type,
  payloadVersion: row.payload_version,
  subscriberHost: hostOf(row.url),
  environment: row.environment,
  transactionId: row.transaction_id,
});

export const identityOf = (row: Pick<DeliveryFactsRow, 'id' | 'uuid' | 'workflow_id'>): EventIdentity => ({
  eventId: row.id,
  key: row.uuid,
  workflowId: row.workflow_id,
});

/** An event whose delivery is to be started: what it is about, who it is, and the trace of the call that caused it. */
export interface EventToStart {
  facts: DeliveryFacts;
  identity: EventIdentity;
  traceContext: StoredTraceContext | null;
}

export const eventToStartOf = (row: DeliveryFactsRow): EventToStart => ({
  facts: deliveryFactsOf(row),
  identity: identityOf(row),
  traceContext: row.trace_context,
});

/** Where an event's delivery stands, with what its workflow is started with (for a resend, or a test). */
export interface EventDelivery extends EventToStart {
  status: DeliveryStatus;
  attempts: number;
  /** Retention dropped its payload: there is nothing left to send. */
  payloadDropped: boolean;
}

export type EventDeliveryRow = DeliveryFactsRow & Pick<WebhookEventRow, 'status' | 'attempts' | 'payload_dropped_at'>;
export const EVENT_DELIVERY_COLUMNS = [...DELIVERY_FACTS_COLUMNS, 'e.status', 'e.attempts', 'e.payload_dropped_at'];

/**
 * What a claim's `UPDATE … RETURNING` hands on to the select of `columns` joined with the endpoint: those of the
 * event's columns, not the whole row (its payload among them, which no start reads).
 */
export const returnedForSelect = (columns: string[]): string =>
  ['endpoint_id', ...columns.filter((column) => column.startsWith('e.')).map((column) => column.slice(2))].join(', ');

export const eventDeliveryOf = (row: EventDeliveryRow): EventDelivery => ({
  status: row.status,
  attempts: row.attempts,
  ...eventToStartOf(row),
  payloadDropped: row.payload_dropped_at !== null,
});

const eventDeliveryQuery = (db: Knex, id: number) =>
  db(`${EVENTS} as e`).join(`${ENDPOINTS} as p`, 'p.id', 'e.endpoint_id').where('e.id', id).first(EVENT_DELIVERY_COLUMNS);

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

/**
 * Shows why an event's delivery could not be started or resumed (a workflow id conflict) as its `last_error`, where
 * the admin page and API show it. Its status and attempts stay; the next attempt it records replaces the text.
 */
export async function recordDeliveryProblem(db: Knex, eventId: number, problem: string): Promise<void> {
  await db(EVENTS).where({ id: eventId }).update({ last_error: problem, updated_at: db.fn.now() });
}
