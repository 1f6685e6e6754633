import type { Knex } from 'knex';

// A checkout is one payment; its positions are the donations. A single donation is a checkout with one position,
// and the checkout number is the number of its first position.
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE SEQUENCE donation_number_seq START WITH 1000001');
  await knex.schema.createTable('recurring_donations', (t) => {
    t.increments('id');
    t.text('environment').notNullable().checkIn(['TEST', 'PRODUCTION']);
    t.integer('contact_id').notNullable().references('contacts.id');
    t.integer('campaign_id').references('campaigns.id');
    t.text('purpose');
    t.bigInteger('amount_minor').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.text('interval').notNullable().checkIn(['monthly', 'quarterly', 'yearly']);
    t.text('payment_method').notNullable();
    t.boolean('active').notNullable().defaultTo(true);
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('checkouts', (t) => {
    t.increments('id');
    t.text('number').notNullable().unique();
    t.text('environment').notNullable().checkIn(['TEST', 'PRODUCTION']);
    t.integer('contact_id').notNullable().references('contacts.id');
    t.specificType('currency', 'char(3)').notNullable();
    t.bigInteger('total_amount_minor').notNullable();
    t.text('transaction_id').notNullable().unique();
    t.text('payment_method').notNullable();
    t.text('payment_status').notNullable().checkIn(['completed', 'pending']);
    t.text('invoice_reference');
    t.integer('recurring_donation_id').references('recurring_donations.id');
    t.jsonb('custom_fields').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['contact_id', 'created_at']);
  });
  await knex.schema.createTable('donations', (t) => {
    t.increments('id');
    t.text('number').notNullable().unique();
    t.integer('checkout_id').notNullable().references('checkouts.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    // Denormalised from the checkout so that the period listing is one index range scan in output order.
    t.text('environment').notNullable().checkIn(['TEST', 'PRODUCTION']);
    t.integer('contact_id').notNullable().references('contacts.id');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.bigInteger('amount_minor').notNullable().checkPositive();
    t.integer('campaign_id').references('campaigns.id');
    t.text('purpose');
    t.text('payment_type').notNullable().checkIn(['single', 'recurring_init', 'recurring_interval', 'crowdfunding']);
    t.integer('recurring_donation_id').references('recurring_donations.id');
    t.unique(['checkout_id', 'position']);
    t.index(['environment', 'created_at', 'number']);
    t.index(['contact_id', 'environment']);
  });
  await knex.schema.createTable('reconciliations', (t) => {
    t.increments('id');
    t.integer('checkout_id').notNullable().unique().references('checkouts.id').onDelete('CASCADE');
    t.bigInteger('paid_out_amount_minor').notNullable();
    t.bigInteger('fee_amount_minor').notNullable();
    t.specificType('payout_currency', 'char(3)').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('reconciliations');
  await knex.schema.dropTable('donations');
  await knex.schema.dropTable('checkouts');
  await knex.schema.dropTable('recurring_donations');
  await knex.raw('DROP SEQUENCE donation_number_seq');
}
