import type { Knex } from 'knex';

/**
 * `relay_claimed_until`: until when a relay has claimed an event it is starting the workflow of. The relay used to
 * hold the rows locked while Temporal answered its starts; with eager starts the first attempt can finish before
 * that, and its status update then waited for the relay's commit. A claim is a row value instead of a lock: taken
 * and released in statements of their own, and a claim whose relay died runs out, so the event is taken again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_events', (t) => {
    t.timestamp('relay_claimed_until', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_events', (t) => {
    t.dropColumn('relay_claimed_until');
  });
}
