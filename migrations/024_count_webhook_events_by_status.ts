import type { Knex } from 'knex';

/**
 * The number of webhook events in each delivery status, kept up to date by Postgres instead of counted at every
 * scrape of the `webhook_events{status}` gauge. Counting them was an index-only scan over every event kept, some
 * 0.27 s of Postgres's CPU per million, in each API replica every 15 s: it grew with the retention and the rate, and past the
 * scrape's 2 s limit the gauge read NaN, so that `WebhookEventsGaveUp` could no longer fire (BENCHMARKS.md, issue 29).
 *
 * - Counts are kept per slot, the writing transaction's id mod 16, so that concurrent writers rarely wait for each
 *   other: each holds its slot's rows until it commits. One statement locks a slot's rows in the order of their
 *   status. The application changes one event's status per statement, and only forward (the delivery rules), so its
 *   writers never wait for each other in a cycle; a statement that changes the status of several events at once (by
 *   hand) may, with a writer in the same slot, and Postgres then aborts one of them (a deadlock error).
 * - An insert counts its row and a status change moves it, row by row (the hot path writes one event per
 *   statement; a row trigger with `WHEN` costs nothing for the many updates that leave the status alone). A delete
 *   (the retention purge, in batches) subtracts per statement; a TRUNCATE empties the counts.
 * - Every writer is counted, whichever release it runs: the previous release keeps writing events during a deploy.
 *   Only a write that skips the triggers (a logical replication subscriber, a data-only restore with
 *   `--disable-triggers`) leaves the counts behind; `pg_dump` and `pg_restore` as docs/backups.md runs them do not.
 * - The events already there are counted while inserts and updates wait: the table is locked for the count (some
 *   0.45 s per million events, more where the table was not vacuumed lately). A lock that cannot be had within 5 s
 *   (a long transaction holds the table) fails the migration, which changed nothing then and can be run again,
 *   rather than leaving every write queued behind it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw("SET LOCAL lock_timeout = '5s'");
  await knex.raw('LOCK TABLE webhook_events IN SHARE ROW EXCLUSIVE MODE');
  await knex.raw('SET LOCAL lock_timeout = DEFAULT');
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
