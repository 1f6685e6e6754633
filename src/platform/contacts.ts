import type { Knex } from 'knex';
import type { ContactModel, Environment } from '../db/models';
import { DONOR_PERSON_FIELDS, type DonorPerson } from '../shared/donor-fields';

/** The contact fields a platform call may set; `newsletter` and `custom_fields` only when the call knows them. */
export type ContactFields = DonorPerson & {
  newsletter?: boolean;
  custom_fields?: Record<string, string | boolean>;
};

/**
 * Finds the contact of an e-mail address in one environment (case-insensitive) or creates it, in one statement so
 * that concurrent calls cannot create two. An existing contact takes the given name and address (the latest
 * donation knows them best); custom field answers are merged, newer answers replacing older ones; newsletter
 * consent is only ever added.
 */
export async function upsertContact(
  trx: Knex.Transaction,
  environment: Environment,
  fields: ContactFields,
  now: Date,
): Promise<ContactModel> {
  const { custom_fields, newsletter } = fields;
  // Columns are named from this fixed list, never from the keys of the (request-derived) fields object.
  const plain: Record<string, unknown> = Object.fromEntries(DONOR_PERSON_FIELDS.map((column) => [column, fields[column]]));
  if (newsletter !== undefined) plain.newsletter = newsletter;
  const row = {
    environment,
    ...plain,
    ...(custom_fields && { custom_fields: JSON.stringify(custom_fields) }),
    created_at: now,
    updated_at: now,
  };
  const updates = DONOR_PERSON_FIELDS.map((column) => `"${column}" = EXCLUDED."${column}"`);
  // An unticked box on a later donation is not an unsubscription: consent once given stays.
  if (newsletter !== undefined) updates.push('newsletter = contacts.newsletter OR EXCLUDED.newsletter');
  if (custom_fields) updates.push('custom_fields = contacts.custom_fields || EXCLUDED.custom_fields');
  updates.push('updated_at = EXCLUDED.updated_at');
  const { rows } = await trx.raw<{ rows: ContactModel[] }>(
    `? ON CONFLICT (environment, lower(email)) DO UPDATE SET ${updates.join(', ')} RETURNING *`,
    [trx('contacts').insert(row)],
  );
  return rows[0];
}
