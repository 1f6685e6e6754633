import type { Knex } from 'knex';

/**
 * The envelope's environment (prod, stage, test) as a column, `environment`, written with the event from what its
 * renderer knew, like the search keys of migration 014: the relay and the resend describe a delivery to Temporal
 * (the `WebhookEnvironment` search attribute) from columns and never parse the payload again.
 * - Events already there get it from their stored payload (when it is a JSON object with a text `environment`);
 *   those whose payload retention dropped keep none, and their deliveries are described without it, as before.
 * - The previous release keeps writing events during a deploy, without this column: the trigger below gives them
 *   the environment of their payload, so every reader finds it in the column, whichever release wrote the event.
 *   Today's code always writes it, so the trigger never runs for its inserts. Once no release older than this one
 *   runs, a later migration may drop the trigger and its function.
 * The search keys need nothing of this kind: the previous release writes them itself (migration 014).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_events ADD COLUMN environment text');
  const fromPayload = (row: string) =>
    `CASE WHEN ${row}.payload IS JSON OBJECT AND jsonb_typeof(${row}.payload::jsonb -> 'environment') = 'string'
          THEN ${row}.payload::jsonb ->> 'environment' END`;
  await knex.raw(`UPDATE webhook_events AS e SET environment = ${fromPayload('e')} WHERE e.payload IS JSON OBJECT`);
  await knex.raw(`
    CREATE FUNCTION webhook_event_environment() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.environment := ${fromPayload('NEW')};
      RETURN NEW;
    END
    $$
  `);
  await knex.raw(`
    CREATE TRIGGER webhook_event_environment BEFORE INSERT ON webhook_events
    FOR EACH ROW WHEN (NEW.environment IS NULL) EXECUTE FUNCTION webhook_event_environment()
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER webhook_event_environment ON webhook_events');
  await knex.raw('DROP FUNCTION webhook_event_environment()');
  await knex.raw('ALTER TABLE webhook_events DROP COLUMN environment');
}
