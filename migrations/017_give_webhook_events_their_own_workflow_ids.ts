import type { Knex } from 'knex';

/**
 * Event ids repeat across databases (a restored older backup, a re-created database, staging and production on one
 * Temporal namespace), so a workflow id made of the event id alone could name another database's event: its start
 * was refused as "already started" and the event never delivered. Every event gets:
 * - `uuid`: a random key of its own (existing rows too), which its workflows carry in their memo, so that "already
 *   started" is checked against it (src/temporal/delivery-identity.ts);
 * - `workflow_id`: the id of its delivery workflow, stored, read by everything that names the workflow. A new event
 *   gets `webhook-event-<id>-<first 8 hex digits of its key>` from the trigger below (whichever code inserts it);
 *   an event whose workflow has started already keeps `webhook-event-<id>`, so that its running workflow, its resend
 *   and its links in the admin page stay what they were;
 * - `sweep_checked_at`: when the healing sweep last asked Temporal about it (its claim, and its pace).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE webhook_events ADD COLUMN uuid uuid NOT NULL DEFAULT gen_random_uuid()');
  await knex.raw('ALTER TABLE webhook_events ADD COLUMN workflow_id text');
  await knex.raw('ALTER TABLE webhook_events ADD COLUMN sweep_checked_at timestamptz');
  await knex.raw(`
    UPDATE webhook_events SET workflow_id = CASE
      WHEN workflow_started_at IS NOT NULL THEN 'webhook-event-' || id
      ELSE 'webhook-event-' || id || '-' || left(uuid::text, 8)
    END
  `);
  await knex.raw(`
    CREATE FUNCTION webhook_event_workflow_id() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.workflow_id := coalesce(NEW.workflow_id, 'webhook-event-' || NEW.id || '-' || left(NEW.uuid::text, 8));
      RETURN NEW;
    END
    $$
  `);
  // BEFORE: the defaults (id, uuid) are filled in already; the NOT NULL below is checked after the trigger.
  // Filled for the previous release by this trigger: its inserts name no workflow_id, the trigger always sets one.
  await knex.raw(`
    CREATE TRIGGER webhook_event_workflow_id BEFORE INSERT ON webhook_events
    FOR EACH ROW EXECUTE FUNCTION webhook_event_workflow_id()
  `);
  await knex.raw('ALTER TABLE webhook_events ALTER COLUMN workflow_id SET NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER webhook_event_workflow_id ON webhook_events');
  await knex.raw('DROP FUNCTION webhook_event_workflow_id()');
  await knex.raw('ALTER TABLE webhook_events DROP COLUMN sweep_checked_at, DROP COLUMN workflow_id, DROP COLUMN uuid');
}
