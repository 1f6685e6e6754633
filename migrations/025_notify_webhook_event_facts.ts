import type { Knex } from 'knex';
import { up as notifyWithoutFacts } from './008_notify_webhook_event_inserted';

/**
 * The insert notification carries what the outbox relay needs to start the event's delivery workflow, so that the
 * leading relay starts each new event without reading (and claiming) it first: one statement less per event on the
 * delivery path (BENCHMARKS.md, issue 29).
 * - One notification per inserted row, its payload the facts a claim reads (src/webhook-events/event-deliveries.ts),
 *   the endpoint's URL among them.
 * - Read at commit (a deferred trigger), from the row as committed: a transaction that marks its new event started
 *   (a restore, a test) sends nothing for it, as a claim would then find nothing.
 * - A notification carries at most 8000 bytes: facts that do not fit (a very long URL) go as an empty payload, which
 *   tells the relay only that events came, as every notification did before; it then claims them from the table.
 * - Not while Postgres's notification queue is half full: a session that LISTENs and stopped reading (a frozen
 *   leader) holds back every notification after it, and a full queue would fail the commit of every platform call.
 *   Each notification now carries some 500 bytes, so the 8 GB queue fills some ten times sooner than with empty
 *   ones. Meanwhile the relays without the lead take the events that waited 3 s.
 * - Only sessions on this database hear it, and each of them may read the table anyway.
 * - The previous release's relay reads no payload: any notification wakes it, as before.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION notify_webhook_event_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      facts text;
    BEGIN
      SELECT json_build_object(
               'id', e.id, 'uuid', e.uuid, 'workflow_id', e.workflow_id, 'event_type', e.event_type,
               'payload_version', e.payload_version, 'environment', e.environment,
               'transaction_id', e.transaction_id, 'trace_context', e.trace_context, 'url', p.url
             )::text
        INTO facts
        FROM webhook_events AS e JOIN webhook_endpoints AS p ON p.id = e.endpoint_id
       WHERE e.id = NEW.id AND e.workflow_started_at IS NULL;
      IF FOUND AND pg_notification_queue_usage() < 0.5 THEN
        PERFORM pg_notify('webhook_event_inserted', CASE WHEN octet_length(facts) <= 7900 THEN facts ELSE '' END);
      END IF;
      RETURN NULL;
    END
    $$
  `);
  await knex.raw('DROP TRIGGER webhook_event_inserted ON webhook_events');
  await knex.raw(`
    CREATE CONSTRAINT TRIGGER webhook_event_inserted AFTER INSERT ON webhook_events
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION notify_webhook_event_inserted()
  `);
}

/** Back to the notification of migration 008: its function and trigger as it created them. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER webhook_event_inserted ON webhook_events');
  await knex.raw('DROP FUNCTION notify_webhook_event_inserted()');
  await notifyWithoutFacts(knex);
}
