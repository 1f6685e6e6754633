import type { Knex } from 'knex';

/**
 * An attempt's start, written just before its POST leaves and deleted by the statement that records its outcome
 * (src/webhook-events/attempts.ts, docs/delivery.md#interrupted-attempts-the-log-counts-what-the-subscriber-saw). A row that stays is an attempt whose
 * worker was lost before the outcome was recorded: the subscriber may have received it, and the admin shows it as
 * interrupted, outcome unknown. A table of its own rather than rows in webhook_delivery_attempts: that table holds
 * one row per attempt number with its outcome (its unique key, which the previous release's
 * `ON CONFLICT (event_id, number)` needs, and its NOT NULL outcome stay as they are), while a retried attempt leaves
 * one start per execution under the same number. The previous release never reads or writes it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE webhook_attempt_starts (
      id bigserial PRIMARY KEY,
      event_id bigint NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
      number integer NOT NULL,
      manual boolean NOT NULL,
      started_at timestamptz NOT NULL
    )
  `);
  await knex.raw('CREATE INDEX webhook_attempt_starts_event_number_idx ON webhook_attempt_starts (event_id, number)');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_attempt_starts');
}
