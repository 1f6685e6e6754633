import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE SEQUENCE shop_order_number_seq START WITH 500001');
  await knex.schema.createTable('shop_orders', (t) => {
    t.increments('id');
    t.text('number').notNullable().unique();
    t.text('environment').notNullable().checkIn(['TEST', 'PRODUCTION']);
    // Null for guest orders; the customer snapshot below is what the order was placed with either way.
    t.integer('contact_id').references('contacts.id');
    t.jsonb('customer').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.bigInteger('total_price_gross_minor').notNullable();
    t.bigInteger('total_vat_minor').notNullable();
    t.bigInteger('total_discount_minor').notNullable();
    t.text('transaction_id').notNullable().unique();
    t.text('payment_method').notNullable();
    t.text('payment_status').notNullable().checkIn(['completed', 'pending']);
    t.text('shipping_method').notNullable();
    t.bigInteger('shipping_cost_minor').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('shop_order_addresses', (t) => {
    t.increments('id');
    t.integer('shop_order_id').notNullable().references('shop_orders.id').onDelete('CASCADE');
    t.text('kind').notNullable().checkIn(['invoice', 'delivery']);
    t.text('first_name');
    t.text('last_name');
    t.text('company');
    t.text('department');
    t.text('care_of');
    t.text('po_box');
    t.text('street');
    t.text('street_number');
    t.text('postal_code');
    t.text('city');
    t.specificType('country', 'char(2)');
    t.unique(['shop_order_id', 'kind']);
  });
  await knex.schema.createTable('shop_order_items', (t) => {
    t.increments('id');
    t.integer('shop_order_id').notNullable().references('shop_orders.id').onDelete('CASCADE');
    t.integer('position').notNullable();
    t.text('article_number').notNullable();
    t.integer('quantity').notNullable().checkPositive();
    t.bigInteger('unit_price_net_minor').notNullable();
    t.bigInteger('unit_price_gross_minor').notNullable();
    t.decimal('discount_percentage', 5, 2).notNullable().defaultTo(0);
    t.bigInteger('total_price_gross_minor').notNullable();
    t.unique(['shop_order_id', 'position']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('shop_order_items');
  await knex.schema.dropTable('shop_order_addresses');
  await knex.schema.dropTable('shop_orders');
  await knex.raw('DROP SEQUENCE shop_order_number_seq');
}
