import type { Knex } from 'knex';

/**
 * The installation: one row, made once per database, whose random id tells this deployment's workers and workflows
 * from another's on the same Temporal namespace (src/webhook-events/installation.ts, docs/delivery.md). A database
 * restored from a backup keeps its installation (it is the same deployment); a re-created one gets a new one.
 * `one_row` keeps it to a single row. The previous release never reads it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE installation (
      one_row boolean PRIMARY KEY DEFAULT true CHECK (one_row),
      id uuid NOT NULL DEFAULT gen_random_uuid(),
      created_at timestamptz NOT NULL DEFAULT now(),
      event_ids_checked_at timestamptz
    )
  `);
  await knex.raw('INSERT INTO installation DEFAULT VALUES');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('installation');
}
