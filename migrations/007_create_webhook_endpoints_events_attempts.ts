import type { Knex } from 'knex';

export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.increments('id');
    // One endpoint per platform: the platform key is unique.
    t.text('platform').notNullable().unique().defaultTo('default');
    t.text('url').notNullable();
    t.boolean('active').notNullable().defaultTo(true);
    t.text('payload_version').notNullable().defaultTo('v1').checkIn(['v1', 'v2', 'v2.1']);
    t.specificType('events', 'text[]').notNullable();
    t.text('basic_auth_username');
    t.text('basic_auth_password');
    t.text('signing_secret');
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.schema.createTable('webhook_events', (t) => {
    // The envelope id: an integer, identical on every retry.
    t.bigIncrements('id');
    t.integer('endpoint_id').notNullable().references('webhook_endpoints.id');
    t.text('event_type').notNullable();
    t.text('payload_version').notNullable();
    // What causes the event, unique so that a repeated platform call cannot create it twice.
    t.text('source_key').notNullable().unique();
    // The exact bytes sent on every attempt, rendered once when the event was created.
    t.text('payload').notNullable();
    t.text('status').notNullable().defaultTo('waiting').checkIn(['waiting', 'delivered', 'failed', 'max_retries_reached']);
    t.integer('attempts').notNullable().defaultTo(0);
    t.integer('last_response_code');
    t.text('last_response_body');
    t.text('last_error');
    t.timestamp('next_attempt_at', { useTz: true });
    t.timestamp('delivered_at', { useTz: true });
    // Set by the outbox relay once Temporal has accepted the workflow; null rows are what the relay still owes.
    t.timestamp('workflow_started_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.timestamp('updated_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.index(['status', 'id']);
    t.index(['event_type', 'id']);
  });
  await knex.raw('CREATE INDEX webhook_events_unstarted_idx ON webhook_events (id) WHERE workflow_started_at IS NULL');
  await knex.schema.createTable('webhook_delivery_attempts', (t) => {
    t.bigIncrements('id');
    t.bigInteger('event_id').notNullable().references('webhook_events.id').onDelete('CASCADE');
    t.integer('number').notNullable();
    t.boolean('manual').notNullable().defaultTo(false);
    t.timestamp('started_at', { useTz: true }).notNullable();
    t.integer('duration_ms').notNullable();
    t.integer('response_code');
    t.text('response_body');
    t.text('error');
    t.text('outcome').notNullable().checkIn(['delivered', 'failed']);
    // Recording an attempt is idempotent: an activity retried by Temporal writes the same row again.
    t.unique(['event_id', 'number']);
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_delivery_attempts');
  await knex.schema.dropTable('webhook_events');
  await knex.schema.dropTable('webhook_endpoints');
}
