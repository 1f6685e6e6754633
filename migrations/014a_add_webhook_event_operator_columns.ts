import type { Knex } from 'knex';

/**
 * What operators need of an event beyond its delivery (issue 14):
 * - `test`: a test event sent from the admin page ("Testereignis senden"), delivered like any other and marked with
 *   the `webhook-test: 1` header (docs/webhooks.md);
 * - `payload_dropped_at`: when retention dropped the payload and the response bodies (PAYLOAD_RETENTION_DAYS); the
 *   row, its status and its attempts stay until EVENT_RETENTION_DAYS;
 * - the search keys the admin finds events by, taken from the payload when the event is written: the payment's
 *   `transaction_id`, the donor's, subscriber's or customer's e-mail in lower case (`donor_email`, cleared with the
 *   payload), and the donation, checkout and order numbers the event is about (the id in `data` and every
 *   position's) in a table of their own, `webhook_event_references`: one row per number, so that Postgres knows how
 *   few events share one (an array with a GIN index is estimated at 0.5 % of the table, and the planner then walks
 *   the newest events instead of the index).
 * Events written before this migration get their keys from their stored payload (when it is a JSON object).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('webhook_events', (t) => {
    t.boolean('test').notNullable().defaultTo(false);
    t.timestamp('payload_dropped_at', { useTz: true });
    t.text('transaction_id');
    t.text('donor_email');
  });
  await knex.schema.createTable('webhook_event_references', (t) => {
    t.text('reference').notNullable();
    t.bigInteger('event_id').notNullable().references('webhook_events.id').onDelete('CASCADE');
    t.primary(['reference', 'event_id']);
    // The cascade from a deleted event (retention) finds its rows by this index.
    t.index(['event_id']);
  });
  // Only text values count, as for the events written from now on (src/webhooks/event-search-keys.ts).
  const text = (path: string) => `CASE WHEN jsonb_typeof(p.data #> '${path}') = 'string' THEN p.data #>> '${path}' END`;
  const parsed = `(SELECT id, payload::jsonb -> 'data' AS data FROM webhook_events WHERE payload IS JSON OBJECT) AS p`;
  await knex.raw(`
    UPDATE webhook_events AS e SET
      transaction_id = coalesce(${text('{donation,payment,transaction_id}')}, ${text('{shop_order,payment,transaction_id}')}),
      donor_email = lower(trim(coalesce(
        ${text('{donation,donor,email}')}, ${text('{newsletter_subscription,email}')}, ${text('{shop_order,customer,email}')}
      )))
    FROM ${parsed}
    WHERE p.id = e.id
  `);
  await knex.raw(`
    INSERT INTO webhook_event_references (reference, event_id)
    SELECT DISTINCT found.value #>> '{}', p.id
    FROM ${parsed}
    CROSS JOIN LATERAL (
      SELECT p.data #> '{donation,id}' AS value
      UNION ALL SELECT p.data #> '{shop_order,id}'
      UNION ALL SELECT position -> 'id'
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(p.data #> '{donation,positions}') = 'array'
                                       THEN p.data #> '{donation,positions}' ELSE '[]'::jsonb END) AS position
    ) AS found
    WHERE jsonb_typeof(found.value) = 'string'
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTable('webhook_event_references');
  await knex.schema.alterTable('webhook_events', (t) => {
    t.dropColumns('test', 'payload_dropped_at', 'transaction_id', 'donor_email');
  });
}
