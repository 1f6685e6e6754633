import type { Knex } from 'knex';

/**
 * What `crm/contacts/` shows on every page, kept up to date by Postgres instead of computed per request: a contact's
 * donation totals per currency, and the number of contacts per environment. Aggregating the donations of a page's
 * contacts and counting all contacts for the page's `count` took most of the page's time (BENCHMARKS.md, part 3).
 *
 * Totals are recomputed from the donations of every contact a statement touched, whatever the statement did, so they
 * cannot drift; the contact row is locked first, so that concurrent payments of one contact recount one after the
 * other and the later sees the earlier's donations. Counts are kept per slot (id mod 16) so that contacts created
 * at the same time rarely wait for each other; a contact never moves between environments.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('contact_donation_totals', (t) => {
    t.integer('contact_id').notNullable().references('contacts.id');
    t.specificType('currency', 'char(3)').notNullable();
    t.integer('position_count').notNullable();
    t.integer('checkout_count').notNullable();
    t.bigInteger('amount_minor').notNullable();
    t.timestamp('first_donation_at', { useTz: true }).notNullable();
    t.timestamp('last_donation_at', { useTz: true }).notNullable();
    t.primary(['contact_id', 'currency']);
  });
  await knex.raw(`
    CREATE FUNCTION recount_contact_donation_totals(contact_ids integer[]) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM contacts WHERE id IN (SELECT unnest(contact_ids)) ORDER BY id FOR NO KEY UPDATE;
      DELETE FROM contact_donation_totals WHERE contact_id IN (SELECT unnest(contact_ids));
      INSERT INTO contact_donation_totals
        (contact_id, currency, position_count, checkout_count, amount_minor, first_donation_at, last_donation_at)
      SELECT d.contact_id, c.currency, count(*), count(DISTINCT d.checkout_id), sum(d.amount_minor),
             min(d.created_at), max(d.created_at)
        FROM donations d
        JOIN checkouts c ON c.id = d.checkout_id
        JOIN contacts ct ON ct.id = d.contact_id AND ct.environment = d.environment
       WHERE d.contact_id IN (SELECT unnest(contact_ids))
       GROUP BY d.contact_id, c.currency;
    END
    $$
  `);
  // One function per event: a trigger function may only name the transition tables its trigger declares.
  for (const [event, tables, contactIds] of [
    ['INSERT', 'NEW TABLE AS new_donations', 'SELECT contact_id FROM new_donations'],
    ['DELETE', 'OLD TABLE AS old_donations', 'SELECT contact_id FROM old_donations'],
    [
      'UPDATE',
      'OLD TABLE AS old_donations NEW TABLE AS new_donations',
      'SELECT contact_id FROM old_donations UNION SELECT contact_id FROM new_donations',
    ],
  ]) {
    const name = `recount_totals_after_donation_${event.toLowerCase()}`;
    await knex.raw(`
      CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM recount_contact_donation_totals(ARRAY(SELECT DISTINCT contact_id FROM (${contactIds}) changed));
        RETURN NULL;
      END
      $$
    `);
    await knex.raw(`CREATE TRIGGER ${name} AFTER ${event} ON donations REFERENCING ${tables}
                    FOR EACH STATEMENT EXECUTE FUNCTION ${name}()`);
  }
  await knex.raw('SELECT recount_contact_donation_totals(ARRAY(SELECT id FROM contacts))');

  await knex.schema.createTable('contact_counts', (t) => {
    t.text('environment').notNullable();
    t.smallint('slot').notNullable();
    t.bigInteger('contacts').notNullable();
    t.primary(['environment', 'slot']);
  });
  for (const [event, table, sign] of [
    ['INSERT', 'NEW TABLE AS changed_contacts', '+'],
    ['DELETE', 'OLD TABLE AS changed_contacts', '-'],
  ]) {
    const name = `count_contacts_after_${event.toLowerCase()}`;
    await knex.raw(`
      CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        INSERT INTO contact_counts AS counted (environment, slot, contacts)
        SELECT environment, id % 16, ${sign}count(*) FROM changed_contacts GROUP BY 1, 2
        ON CONFLICT (environment, slot) DO UPDATE SET contacts = counted.contacts + excluded.contacts;
        RETURN NULL;
      END
      $$
    `);
    await knex.raw(`CREATE TRIGGER ${name} AFTER ${event} ON contacts REFERENCING ${table}
                    FOR EACH STATEMENT EXECUTE FUNCTION ${name}()`);
  }
  await knex.raw(`
    CREATE FUNCTION refuse_contact_environment_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'a contact stays in its environment (contact %)', OLD.id;
    END
    $$
  `);
  await knex.raw(`
    CREATE TRIGGER refuse_contact_environment_change BEFORE UPDATE OF environment ON contacts
    FOR EACH ROW WHEN (OLD.environment IS DISTINCT FROM NEW.environment)
    EXECUTE FUNCTION refuse_contact_environment_change()
  `);
  await knex.raw(`
    INSERT INTO contact_counts (environment, slot, contacts)
    SELECT environment, id % 16, count(*) FROM contacts GROUP BY 1, 2
  `);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER refuse_contact_environment_change ON contacts');
  await knex.raw('DROP FUNCTION refuse_contact_environment_change()');
  for (const event of ['insert', 'delete']) {
    await knex.raw(`DROP TRIGGER count_contacts_after_${event} ON contacts`);
    await knex.raw(`DROP FUNCTION count_contacts_after_${event}()`);
  }
  await knex.schema.dropTable('contact_counts');
  for (const event of ['insert', 'delete', 'update']) {
    await knex.raw(`DROP TRIGGER recount_totals_after_donation_${event} ON donations`);
    await knex.raw(`DROP FUNCTION recount_totals_after_donation_${event}()`);
  }
  await knex.raw('DROP FUNCTION recount_contact_donation_totals(integer[])');
  await knex.schema.dropTable('contact_donation_totals');
}
