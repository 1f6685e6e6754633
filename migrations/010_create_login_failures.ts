import type { Knex } from 'knex';

/**
 * Counters of password checks per user name and per client address, in fixed windows, for the failed-login
 * limiter. Shared by every API process; keys are hashes, so attacker-chosen names are never stored as typed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('login_failures', (t) => {
    t.text('key').primary();
    t.integer('failures').notNullable();
    t.timestamp('window_started_at', { useTz: true }).notNullable().index();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('login_failures');
}
