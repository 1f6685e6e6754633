import type { Knex } from 'knex';

/**
 * The trace context of the platform call that wrote an event, as W3C Trace Context's headers
 * (`{"traceparent": "00-…", "tracestate": "…"}`), written in the same transaction: the relay starts the event's
 * delivery workflow inside it, so that the call and every attempt of its delivery are one trace
 * (docs/observability.md#traces). Null while tracing is off, and for events written before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_events ADD COLUMN trace_context jsonb');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_events DROP COLUMN trace_context');
}
