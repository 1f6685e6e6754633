import type { Knex } from 'knex';
import { currentTraceContext } from '../tracing';
import type { RenderedPayload } from '../webhooks/envelope';
import { type DeliveryFactsRow, type EventToStart, eventToStartOf } from './event-deliveries';
import { EVENTS, REFERENCES, type WebhookEventRow } from './tables';

/**
 * The outbox: events written inside the platform's transaction (status waiting), and the notice a relay waits for
 * when a transaction that wrote some commits.
 */

/** Channel of the insert trigger of migrations 008 and 025 (kept literal there: migrations do not change with the code). */
export const EVENT_INSERTED_CHANNEL = 'webhook_event_inserted';

/**
 * The event a notification names, with the facts its delivery workflow is started with (the trigger of migration 025
 * sends them as a claim reads them); undefined for a notification that only says events came (an empty payload:
 * facts too long for a notification, or a database migrated only up to 008), which the relay claims from the table.
 */
export function notifiedEvent(payload: string | undefined): EventToStart | undefined {
  if (!payload) return undefined;
  let facts: unknown;
  try {
    facts = JSON.parse(payload);
  } catch {
    return undefined; // not the trigger's (a NOTIFY by hand): the table says what came
  }
  return isDeliveryFactsRow(facts) ? eventToStartOf(facts) : undefined;
}

const textOrNull = (value: unknown) => value === null || typeof value === 'string';

/** The trigger's payload, field by field: anything else on the channel names no event. */
function isDeliveryFactsRow(facts: unknown): facts is DeliveryFactsRow {
  if (typeof facts !== 'object' || facts === null) return false;
  const row = facts as Record<keyof DeliveryFactsRow, unknown>;
  return (
    Number.isSafeInteger(row.id) &&
    [row.uuid, row.workflow_id, row.event_type, row.payload_version, row.url].every((value) => typeof value === 'string') &&
    textOrNull(row.environment) &&
    textOrNull(row.transaction_id) &&
    typeof row.trace_context === 'object' // null included
  );
}

export type NewWebhookEvent = Pick<WebhookEventRow, 'id' | 'endpoint_id' | 'event_type' | 'payload_version' | 'source_key' | 'created_at'> &
  Partial<Pick<WebhookEventRow, 'test'>> & {
    /** The envelope, rendered with the row's id, and the facts stored beside it. */
    payload: RenderedPayload;
  };

/** Reserves the id of an event about to be written: its envelope, rendered before the insert, carries it. */
export async function reserveEventId(trx: Knex.Transaction): Promise<number> {
  const {
    rows: [{ id }],
  } = await trx.raw<{ rows: { id: string }[] }>(`SELECT nextval(pg_get_serial_sequence('${EVENTS}', 'id')) AS id`);
  return Number(id);
}

/**
 * Writes a new event, status waiting, with the facts its renderer gave as columns: the keys the admin searches it by
 * and the environment its delivery workflow is found by; and the trace context of the call that caused it, so that its
 * delivery joins that trace. Its references go in with it, in the same statement: the platform call pays one round
 * trip for its event (BENCHMARKS.md, issue 29). Answers its workflow id (given by the insert trigger of migration
 * 017). Undefined when an event of the same `source_key` exists (a repeated cause): then nothing is written.
 */
export async function insertEvent(trx: Knex.Transaction, { payload, ...event }: NewWebhookEvent): Promise<{ workflowId: string } | undefined> {
  const { transactionId, email, references } = payload.searchKeys;
  const traceContext = currentTraceContext();
  const {
    rows: [inserted],
  } = await trx.raw<{ rows: Array<Pick<WebhookEventRow, 'workflow_id'>> }>(
    `WITH inserted AS (
       INSERT INTO ${EVENTS}
         (id, endpoint_id, event_type, payload_version, source_key, test, payload, environment, transaction_id, donor_email,
          status, trace_context, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'waiting', ?, ?, ?)
       ON CONFLICT (source_key) DO NOTHING
       RETURNING id, workflow_id
     ), referenced AS (
       INSERT INTO ${REFERENCES} (event_id, reference) SELECT inserted.id, reference FROM inserted, jsonb_array_elements_text(?::jsonb) AS reference
     )
     SELECT workflow_id FROM inserted`,
    [
      event.id,
      event.endpoint_id,
      event.event_type,
      event.payload_version,
      event.source_key,
      event.test ?? false,
      payload.text,
      payload.environment,
      transactionId,
      email,
      traceContext ? JSON.stringify(traceContext) : null,
      event.created_at,
      event.created_at,
      // As JSON: Knex would spread an array into a list of bindings.
      JSON.stringify(references),
    ],
  );
  return inserted ? { workflowId: inserted.workflow_id } : undefined;
}
