import type { Knex } from 'knex';

/**
 * Sessions (a sign-in and the refresh tokens rotated from it, claim `sid`) ended before their time: by logout, or
 * because a refresh token of theirs was presented again after it had been rotated (src/auth/refresh-tokens.ts,
 * docs/api.md). Kept until every token of the session has expired anyway.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ended_sessions', (t) => {
    t.text('session_id').primary();
    t.integer('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.text('reason').notNullable().checkIn(['logout', 'refresh_token_reused'], 'ended_sessions_reason_check');
    t.timestamp('ended_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable().index();
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('ended_sessions');
}
