import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('newsletter_subscriptions', (t) => {
    t.increments('id');
    t.integer('contact_id').references('contacts.id').onDelete('SET NULL');
    t.text('gender').notNullable().defaultTo('');
    t.text('first_name');
    t.text('last_name');
    t.text('email').notNullable();
    t.specificType('language', 'char(2)').notNullable();
    t.text('channel').notNullable().defaultTo('form');
    t.timestamp('confirmed_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw(
    'CREATE INDEX newsletter_subscriptions_confirmed_idx ON newsletter_subscriptions (confirmed_at, id) WHERE confirmed_at IS NOT NULL',
  );
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('newsletter_subscriptions');
}
