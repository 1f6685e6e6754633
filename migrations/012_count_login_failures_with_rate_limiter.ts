import type { Knex } from 'knex';

/**
 * `login_failures` in the layout of rate-limiter-flexible's Postgres store (src/auth/login-throttle.ts), replacing
 * the hand-written counters of migration 010: failed password checks per user name and per (user name, client).
 * Keys are hashes, so a password typed into the user name field is never stored; `expire` is in milliseconds.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.dropTable('login_failures');
  await knex.schema.createTable('login_failures', (t) => {
    t.string('key', 255).primary();
    t.integer('points').notNullable().defaultTo(0);
    // Each API process deletes rows past their expiry every few minutes; the index keeps that cheap.
    t.bigInteger('expire').index();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('login_failures');
  await knex.schema.createTable('login_failures', (t) => {
    t.text('key').primary();
    t.integer('failures').notNullable();
    t.timestamp('window_started_at', { useTz: true }).notNullable().index();
  });
}
