import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('users', (t) => {
    t.increments('id');
    t.text('username').notNullable().unique();
    t.text('password_hash').notNullable();
    t.boolean('is_staff').notNullable().defaultTo(false);
    t.boolean('is_active').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  // Refresh tokens are stateless JWTs; only the blocked ones are stored, until they would have expired anyway.
  await knex.schema.createTable('refresh_token_blacklist', (t) => {
    t.text('jti').primary();
    t.integer('user_id').notNullable().references('users.id').onDelete('CASCADE');
    t.timestamp('expires_at', { useTz: true }).notNullable().index();
    t.timestamp('blacklisted_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('refresh_token_blacklist');
  await knex.schema.dropTable('users');
}
