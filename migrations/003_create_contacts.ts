import type { Knex } from 'knex';

// Contacts live in one payment environment: test donors never appear among live contacts.
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('contacts', (t) => {
    t.increments('id');
    t.text('environment').notNullable().checkIn(['TEST', 'PRODUCTION']);
    t.text('gender').notNullable();
    t.text('first_name').notNullable();
    t.text('last_name').notNullable();
    t.text('email').notNullable();
    t.text('company');
    t.text('po_box');
    t.text('street').notNullable();
    t.text('street_number').notNullable();
    t.text('postal_code').notNullable();
    t.text('city').notNullable();
    t.specificType('country', 'char(2)').notNullable();
    t.specificType('language', 'char(2)').notNullable();
    t.boolean('newsletter').notNullable().defaultTo(false);
    t.jsonb('custom_fields').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['environment', 'id']);
    t.index(['environment', 'updated_at']);
  });
  await knex.raw('CREATE UNIQUE INDEX contacts_environment_email_unique ON contacts (environment, lower(email))');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('contacts');
}
