import type { Knex } from 'knex';

/**
 * `relay_claimed_at`: when a relay claimed an event to start its workflow. The relay used to hold the rows locked
 * while Temporal answered its starts; with eager starts the first attempt can finish before that, and its status
 * update then waited for the relay's commit. A claim is a row value instead of a lock: taken and ended in statements
 * of their own, and the claim of a relay that died runs out, so the event is taken again. A started event keeps the
 * time its relay claimed it (the benchmarks read it as the pass's begin).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_events', (t) => {
    t.timestamp('relay_claimed_at', { useTz: true });
  });
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_events', (t) => {
    t.dropColumn('relay_claimed_at');
  });
}
