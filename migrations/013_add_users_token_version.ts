import type { Knex } from 'knex';

/**
 * The token version of each user, carried in every token: raising it (password change, deactivation, demotion)
 * ends every session of the user at once (src/auth/accounts.ts, docs/api.md).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.integer('token_version').notNullable().defaultTo(1);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('users', (t) => {
    t.dropColumn('token_version');
  });
}
