import type { Knex } from 'knex';

/*
 * Three rules of the write side, kept for the rows already there (docs/platform-api.md).
 *
 * One namespace of transaction ids. A transaction id names one payment, whatever kind it is: a checkout and a
 * shop order could share one, each table having only its own unique index. `transaction_ids` holds every id with the
 * table that holds it; triggers on both tables keep it (whatever writes them: the commands, a fixture, an operator),
 * and its primary key refuses an id the other table has. A checkout and a recurring follow-up are both rows of
 * `checkouts`, whose own index keeps them apart. Ids that a checkout and a shop order already shared stay with the
 * checkout here; the shop order keeps its row.
 *
 * A contact's merged custom field answers are capped (src/platform/custom-field-answers.ts); contacts that grew
 * beyond the cap before keep the latest answers of their most recently answered field names, as the rule does.
 *
 * Consent belongs to the address that confirmed: a newsletter sign-up is never linked to a contact with another
 * e-mail address. Sign-ups that were (a contact_id named by the caller) are unlinked, so that the read API no longer
 * shows that contact's name and address for them. A consent such a confirmation gave the contact stays: it cannot be
 * told from one the contact gave on a donation form (docs/platform-api.md says how to find them).
 */

const CAP = 50;

export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE transaction_ids (
      transaction_id text PRIMARY KEY,
      holder text NOT NULL CHECK (holder IN ('payment', 'shop_order'))
    )
  `);
  await knex.raw(`INSERT INTO transaction_ids SELECT transaction_id, 'payment' FROM checkouts`);
  await knex.raw(`INSERT INTO transaction_ids SELECT transaction_id, 'shop_order' FROM shop_orders ON CONFLICT DO NOTHING`);
  // One function for both tables: the holder is the trigger's argument. An UPDATE moves only the ids it changed, so
  // that an id shared before this migration does not make every later update of its shop order fail.
  await knex.raw(`
    CREATE FUNCTION keep_transaction_ids() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'INSERT' THEN
        INSERT INTO transaction_ids SELECT transaction_id, TG_ARGV[0] FROM new_rows;
      ELSIF TG_OP = 'UPDATE' THEN
        DELETE FROM transaction_ids k USING old_rows o
         WHERE k.transaction_id = o.transaction_id AND k.holder = TG_ARGV[0]
           AND NOT EXISTS (SELECT 1 FROM new_rows n WHERE n.transaction_id = o.transaction_id);
        INSERT INTO transaction_ids SELECT n.transaction_id, TG_ARGV[0] FROM new_rows n
         WHERE NOT EXISTS (SELECT 1 FROM old_rows o WHERE o.transaction_id = n.transaction_id);
      ELSE
        DELETE FROM transaction_ids k USING old_rows o WHERE k.transaction_id = o.transaction_id AND k.holder = TG_ARGV[0];
      END IF;
      RETURN NULL;
    END
    $$
  `);
  for (const [table, holder] of [['checkouts', 'payment'], ['shop_orders', 'shop_order']]) {
    const keep = `FOR EACH STATEMENT EXECUTE FUNCTION keep_transaction_ids('${holder}')`;
    await knex.raw(`CREATE TRIGGER keep_transaction_ids_after_insert AFTER INSERT ON ${table} REFERENCING NEW TABLE AS new_rows ${keep}`);
    await knex.raw(
      `CREATE TRIGGER keep_transaction_ids_after_update AFTER UPDATE ON ${table} REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows ${keep}`,
    );
    await knex.raw(`CREATE TRIGGER keep_transaction_ids_after_delete AFTER DELETE ON ${table} REFERENCING OLD TABLE AS old_rows ${keep}`);
  }

  await knex.raw(
    `
    UPDATE contacts ct SET custom_fields = capped.fields, updated_at = now()
      FROM (
        SELECT contact_id, jsonb_object_agg(key, value) AS fields
          FROM (
            SELECT contact_id, key, value,
                   row_number() OVER (PARTITION BY contact_id ORDER BY created_at DESC, checkout_id DESC, key) AS recency
              FROM (
                SELECT DISTINCT ON (c.contact_id, f.key) c.contact_id, f.key, f.value, c.created_at, c.id AS checkout_id
                  FROM checkouts c CROSS JOIN LATERAL jsonb_each(c.custom_fields) f
                 WHERE c.recurring_donation_id IS NULL
                   AND c.contact_id IN (SELECT id FROM contacts WHERE (SELECT count(*) FROM jsonb_object_keys(custom_fields)) > ?)
                 ORDER BY c.contact_id, f.key, c.created_at DESC, c.id DESC
              ) latest
          ) ranked
         WHERE recency <= ?
         GROUP BY contact_id
      ) capped
     WHERE ct.id = capped.contact_id
  `,
    [CAP, CAP],
  );

  await knex.raw(`
    UPDATE newsletter_subscriptions ns SET contact_id = NULL
      FROM contacts ct
     WHERE ct.id = ns.contact_id AND lower(ct.email) <> lower(ns.email)
  `);
}

export async function down(knex: Knex): Promise<void> {
  // The capped answers stay capped (every answer is still on the checkout it came with), unlinked sign-ups unlinked.
  for (const table of ['checkouts', 'shop_orders']) {
    for (const operation of ['insert', 'update', 'delete']) await knex.raw(`DROP TRIGGER keep_transaction_ids_after_${operation} ON ${table}`);
  }
  await knex.raw('DROP FUNCTION keep_transaction_ids()');
  await knex.raw('DROP TABLE transaction_ids');
}
