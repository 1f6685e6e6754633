import type { Knex } from 'knex';

/**
 * The number of webhook events in each delivery status, kept up to date by Postgres instead of counted at every
 * scrape of the `webhook_events{status}` gauge. Counting them was an index-only scan over every event kept, some
 * 0.2–0.3 s per million, in each API replica every 15 s: it grew with the retention and the rate, and past the
 * scrape's 2 s limit the gauge read NaN, so that `WebhookEventsGaveUp` could no longer fire (BENCHMARKS.md, issue 29).
 *
 * - Counts are kept per slot, the writing transaction's id mod 16, so that concurrent writers rarely wait for each
 *   other: each holds its slot's rows until it commits. A transaction writes its changes in one slot and locks a
 *   slot's rows in the order of their status, so that two transactions changing one event each never wait for each
 *   other in a cycle.
 * - An insert counts its row and a status change moves it, row by row (the hot path writes one event per
 *   statement; a row trigger with `WHEN` costs nothing for the many updates that leave the status alone). A delete
 *   (the retention purge, in batches) subtracts per statement; a TRUNCATE empties the counts.
 * - Every writer is counted, whichever release it runs: the previous release keeps writing events during a deploy.
 * - The events already there are counted while inserts and updates wait (the table is locked for the count: some
 *   0.2–0.3 s per million events), so that none is counted twice or missed.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('LOCK TABLE webhook_events IN SHARE ROW EXCLUSIVE MODE');
  await knex.schema.createTable('webhook_event_counts', (t) => {
    t.text('status').notNullable();
    t.smallint('slot').notNullable();
    t.bigInteger('events').notNullable();
    t.primary(['status', 'slot']);
  });
  const addToCounts = (changes: string) => `
    INSERT INTO webhook_event_counts AS counted (status, slot, events)
    SELECT status, txid_current() % 16, events FROM (${changes}) AS changes(status, events) ORDER BY status
    ON CONFLICT (status, slot) DO UPDATE SET events = counted.events + excluded.events`;
  for (const [name, body, trigger] of [
    [
      'count_inserted_webhook_event',
      addToCounts('VALUES (NEW.status, 1)'),
      'AFTER INSERT ON webhook_events FOR EACH ROW',
    ],
    [
      'count_webhook_event_status_change',
      addToCounts('VALUES (OLD.status, -1), (NEW.status, 1)'),
      'AFTER UPDATE OF status ON webhook_events FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status)',
    ],
    [
      'count_deleted_webhook_events',
      addToCounts('SELECT status, -count(*) FROM deleted_events GROUP BY status'),
      'AFTER DELETE ON webhook_events REFERENCING OLD TABLE AS deleted_events FOR EACH STATEMENT',
    ],
    ['count_truncated_webhook_events', 'DELETE FROM webhook_event_counts', 'AFTER TRUNCATE ON webhook_events FOR EACH STATEMENT'],
  ]) {
    await knex.raw(`
      CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        ${body};
        RETURN NULL;
      END
      $$
    `);
    await knex.raw(`CREATE TRIGGER ${name} ${trigger} EXECUTE FUNCTION ${name}()`);
  }
  await knex.raw(`
    INSERT INTO webhook_event_counts (status, slot, events)
    SELECT status, id % 16, count(*) FROM webhook_events GROUP BY 1, 2
  `);
}

export async function down(knex: Knex): Promise<void> {
  for (const name of ['count_inserted_webhook_event', 'count_webhook_event_status_change', 'count_deleted_webhook_events', 'count_truncated_webhook_events']) {
    await knex.raw(`DROP TRIGGER ${name} ON webhook_events`);
    await knex.raw(`DROP FUNCTION ${name}()`);
  }
  await knex.schema.dropTable('webhook_event_counts');
}
