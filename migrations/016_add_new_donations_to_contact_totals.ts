import type { Knex } from 'knex';

/**
 * A new donation is added to its contact's totals instead of recounting all the contact's donations (migration 011
 * still recounts after a correction or deletion, which are rare). The recount made every donation insert cost
 * 0.5–1.8 ms of Postgres, more the more donations there were (BENCHMARKS.md, issue 15), and a donor with thousands
 * of donations would have paid for all of them at each new one; the addition reads only the new rows and, to tell a
 * checkout already counted for the contact, the donations of their own checkouts.
 *
 * The contact row is locked first, as the recount does, so that changes to one contact's totals apply one after the
 * other; the ON CONFLICT update then adds to the totals the previous change left.
 *
 * Adding is only right if nothing has counted the new rows yet. An INSERT … ON CONFLICT DO UPDATE on donations fires
 * its AFTER UPDATE trigger first, whose recount already sees the inserted rows; so an UPDATE or DELETE of donations
 * marks the transaction, and an insert in a marked transaction recounts its contacts instead of adding (src/ never
 * changes or deletes donations, so payments always add).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER recount_totals_after_donation_insert ON donations');
  await knex.raw('DROP FUNCTION recount_totals_after_donation_insert()');
  await knex.raw(`
    CREATE FUNCTION add_to_totals_after_donation_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF current_setting('contact_totals.recounted', true) = 'on' THEN
        PERFORM recount_contact_donation_totals(ARRAY(SELECT DISTINCT contact_id FROM new_donations));
        RETURN NULL;
      END IF;
      PERFORM 1 FROM contacts WHERE id IN (SELECT contact_id FROM new_donations) ORDER BY id FOR NO KEY UPDATE;
      INSERT INTO contact_donation_totals AS totals
        (contact_id, currency, position_count, checkout_count, amount_minor, first_donation_at, last_donation_at)
      SELECT n.contact_id, c.currency, count(*),
             -- A checkout is counted already if an earlier position of it is the contact's and in the contact's
             -- environment (n.environment is, by the join below): others the recount does not count either.
             -- OFFSET 0 keeps the planner on the checkout's donations: looked up by contact, the check would read
             -- every donation the donor ever made.
             count(DISTINCT n.checkout_id) FILTER (WHERE NOT EXISTS (
               SELECT 1 FROM (SELECT id, contact_id, environment FROM donations WHERE checkout_id = n.checkout_id OFFSET 0) counted
                WHERE counted.contact_id = n.contact_id AND counted.environment = n.environment
                  AND counted.id NOT IN (SELECT id FROM new_donations))),
             sum(n.amount_minor), min(n.created_at), max(n.created_at)
        FROM new_donations n
        JOIN checkouts c ON c.id = n.checkout_id
        JOIN contacts ct ON ct.id = n.contact_id AND ct.environment = n.environment
       GROUP BY n.contact_id, c.currency
      ON CONFLICT (contact_id, currency) DO UPDATE SET
        position_count = totals.position_count + excluded.position_count,
        checkout_count = totals.checkout_count + excluded.checkout_count,
        amount_minor = totals.amount_minor + excluded.amount_minor,
        first_donation_at = least(totals.first_donation_at, excluded.first_donation_at),
        last_donation_at = greatest(totals.last_donation_at, excluded.last_donation_at);
      RETURN NULL;
    END
    $$
  `);
  await knex.raw(`CREATE TRIGGER add_to_totals_after_donation_insert AFTER INSERT ON donations
                  REFERENCING NEW TABLE AS new_donations FOR EACH STATEMENT EXECUTE FUNCTION add_to_totals_after_donation_insert()`);
  await knex.raw(`
    CREATE FUNCTION mark_contact_totals_recounted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM set_config('contact_totals.recounted', 'on', true);
      RETURN NULL;
    END
    $$
  `);
  await knex.raw(`CREATE TRIGGER mark_contact_totals_recounted AFTER UPDATE OR DELETE ON donations
                  FOR EACH STATEMENT EXECUTE FUNCTION mark_contact_totals_recounted()`);
}

export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TRIGGER mark_contact_totals_recounted ON donations');
  await knex.raw('DROP FUNCTION mark_contact_totals_recounted()');
  await knex.raw('DROP TRIGGER add_to_totals_after_donation_insert ON donations');
  await knex.raw('DROP FUNCTION add_to_totals_after_donation_insert()');
  await knex.raw(`
    CREATE FUNCTION recount_totals_after_donation_insert() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM recount_contact_donation_totals(ARRAY(SELECT DISTINCT contact_id FROM (SELECT contact_id FROM new_donations) changed));
      RETURN NULL;
    END
    $$
  `);
  await knex.raw(`CREATE TRIGGER recount_totals_after_donation_insert AFTER INSERT ON donations
                  REFERENCING NEW TABLE AS new_donations FOR EACH STATEMENT EXECUTE FUNCTION recount_totals_after_donation_insert()`);
}
