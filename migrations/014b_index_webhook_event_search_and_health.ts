import type { Knex } from 'knex';

/**
 * Indexes of the operators' queries (EXPLAIN plans in docs/admin.md):
 * - the admin's search by transaction id and e-mail (the numbers have their table, migration 014 before this one);
 * - the created-date range of the search, of bulk recovery and of the retention purge, which deletes the oldest
 *   events in (created_at, id) order, and drops the payloads of the oldest events that still have theirs (partial
 *   index: the rows whose payload is dropped already are never walked again);
 * - the health view's attempts of the last 24 hours / 7 days, and its last successful attempt.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE INDEX webhook_events_transaction_id_idx ON webhook_events (transaction_id)');
  await knex.raw('CREATE INDEX webhook_events_donor_email_idx ON webhook_events (donor_email)');
  await knex.raw('CREATE INDEX webhook_events_created_at_idx ON webhook_events (created_at, id)');
  await knex.raw('CREATE INDEX webhook_events_payload_kept_idx ON webhook_events (created_at, id) WHERE payload_dropped_at IS NULL');
  await knex.raw('CREATE INDEX webhook_delivery_attempts_started_at_idx ON webhook_delivery_attempts (started_at)');
  await knex.raw(
    "CREATE INDEX webhook_delivery_attempts_delivered_idx ON webhook_delivery_attempts (started_at) WHERE outcome = 'delivered'",
  );
}

export async function down(knex: Knex): Promise<void> {
  for (const index of [
    'webhook_delivery_attempts_delivered_idx',
    'webhook_delivery_attempts_started_at_idx',
    'webhook_events_payload_kept_idx',
    'webhook_events_created_at_idx',
    'webhook_events_donor_email_idx',
    'webhook_events_transaction_id_idx',
  ]) {
    await knex.raw(`DROP INDEX ${index}`);
  }
}
