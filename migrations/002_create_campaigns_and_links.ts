import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('campaigns', (t) => {
    t.increments('id');
    t.text('title').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('campaign_links', (t) => {
    t.text('id').primary();
    t.integer('campaign_id').notNullable().references('campaigns.id');
    t.boolean('active').notNullable().defaultTo(true);
    t.specificType('currency', 'char(3)').notNullable();
    t.specificType('amounts_minor', 'bigint[]').notNullable();
    t.bigInteger('default_amount_minor').notNullable();
    t.bigInteger('minimum_amount_minor').notNullable();
    t.specificType('payment_methods', 'text[]').notNullable();
    t.specificType('purposes', 'text[]').notNullable().defaultTo('{}');
    t.boolean('recurring_enabled').notNullable().defaultTo(false);
    t.specificType('recurring_intervals', 'text[]').notNullable().defaultTo('{}');
    t.jsonb('custom_fields').notNullable().defaultTo('[]');
    t.boolean('cover_fees').notNullable().defaultTo(false);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('campaign_links');
  await knex.schema.dropTable('campaigns');
}
