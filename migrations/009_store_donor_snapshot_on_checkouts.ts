import type { Knex } from 'knex';

/**
 * The donor of a payment as it stood when the payment was recorded, so that every donation event of the payment
 * (donation.completed, donation.recurring_completed, and donation.reconciled hours later) shows the same donor even
 * after the contact has changed (a later donation with a new address, a newsletter confirmation).
 * Existing payments get their contact as it is now: the best that is known of them.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('checkouts', (t) => {
    t.jsonb('donor');
  });
  // The donor fields as of this migration, spelled out: a migration must not change when the code does.
  await knex.raw(`
    UPDATE checkouts c
    SET donor = jsonb_build_object(
      'gender', ct.gender, 'first_name', ct.first_name, 'last_name', ct.last_name, 'email', ct.email,
      'company', ct.company, 'po_box', ct.po_box, 'street', ct.street, 'street_number', ct.street_number,
      'postal_code', ct.postal_code, 'city', ct.city, 'country', ct.country, 'language', ct.language,
      'newsletter', ct.newsletter)
    FROM contacts ct
    WHERE ct.id = c.contact_id
  `);
  await knex.raw('ALTER TABLE checkouts ALTER COLUMN donor SET NOT NULL');
}

export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('checkouts', (t) => {
    t.dropColumn('donor');
  });
}
