import type { Knex } from 'knex';

/**
 * Wakes the outbox relay as soon as an event is committed (NOTIFY is delivered on commit), so that deliveries start
 * within milliseconds instead of at the next poll. One notification per statement: the relay reads the table anyway.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE FUNCTION notify_webhook_event_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('webhook_event_inserted', '');
      RETURN NULL;
    END
    $$
  `);
  await knex.raw(`
    CREATE TRIGGER webhook_event_inserted AFTER INSERT ON webhook_events
    FOR EACH STATEMENT EXECUTE FUNCTION notify_webhook_event_inserted()
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER webhook_event_inserted ON webhook_events');
  await knex.raw('DROP FUNCTION notify_webhook_event_inserted()');
}
