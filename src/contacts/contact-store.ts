import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { DONOR_FIELDS, DONOR_PERSON_FIELDS, type Donor, type DonorPerson } from '../shared/donor-fields';
import type { Environment } from '../shared/environment';
import type { CheckoutShape } from '../shared/version-features';

/*
 * Contacts (table `contacts`) and the statistics Postgres keeps of them (`contact_donation_totals`, `contact_counts`,
 * maintained by the triggers of migration 011, so only read here): the only module that queries them.
 */

const CONTACTS = 'contacts';
const DONATION_TOTALS = 'contact_donation_totals';
const COUNTS = 'contact_counts';

/** A row of `contacts`: one donor in one environment, identified by e-mail address (case-insensitive). */
export interface ContactRow extends Donor {
  id: number;
  environment: Environment;
  custom_fields: Record<string, string | boolean>;
  created_at: Date;
  updated_at: Date;
}

/** The contact fields a platform call may set; `newsletter` and `custom_fields` only when the call knows them. */
export type ContactFields = DonorPerson & {
  newsletter?: boolean;
  custom_fields?: Record<string, string | boolean>;
};

/** A contact with the statistics Postgres keeps of its donations, folded over the currencies. */
export interface ContactWithStatistics extends Donor {
  id: number;
  custom_fields: Record<string, string | boolean>;
  created_at: Date;
  donation_count: number | null;
  first_donation_at: Date | null;
  last_donation_at: Date | null;
  totals: Array<{ currency: string; amount_minor: number }> | null;
}

/**
 * Finds the contact of an e-mail address in one environment (case-insensitive) or creates it, in one statement so
 * that concurrent calls cannot create two. An existing contact takes the given name and address (the latest
 * donation knows them best); custom field answers are merged, newer answers replacing older ones (and capped once
 * the checkout is written: custom-field-answers.ts); newsletter consent is only ever added.
 */
export async function upsertContact(
  trx: Knex.Transaction,
  environment: Environment,
  fields: ContactFields,
  now: Date,
): Promise<ContactRow> {
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
  if (newsletter !== undefined) updates.push(`newsletter = ${CONTACTS}.newsletter OR EXCLUDED.newsletter`);
  if (custom_fields) updates.push(`custom_fields = ${CONTACTS}.custom_fields || EXCLUDED.custom_fields`);
  updates.push('updated_at = EXCLUDED.updated_at');
  const { rows } = await trx.raw<{ rows: ContactRow[] }>(
    `? ON CONFLICT (environment, lower(email)) DO UPDATE SET ${updates.join(', ')} RETURNING *`,
    [trx(CONTACTS).insert(row)],
  );
  return rows[0];
}

export async function findContact(db: Db, id: number): Promise<ContactRow | undefined> {
  return db(CONTACTS).where({ id }).first();
}

/**
 * Whether the contact has this e-mail address, compared as contacts are found (case-insensitive): `same` or `other`,
 * undefined for no such contact.
 */
export async function addressOfContact(db: Db, id: number, email: string): Promise<'same' | 'other' | undefined> {
  const contact = await db(CONTACTS).where({ id }).first(db.raw('lower(email) = lower(?) AS same', [email]));
  if (contact === undefined) return undefined;
  return contact.same ? 'same' : 'other';
}

/** Whether the contact exists (in the environment, when one is given). */
export async function contactExists(db: Db, contact: { id: number; environment?: Environment }): Promise<boolean> {
  return (await db(CONTACTS).where(contact).first('id')) !== undefined;
}

/** The id of the environment's contact with this e-mail address (case-insensitive), if there is one. */
export async function findContactIdByEmail(db: Db, environment: Environment, email: string): Promise<number | undefined> {
  const contact = await db(CONTACTS).where({ environment }).whereRaw('lower(email) = lower(?)', [email]).first('id');
  return contact?.id;
}

/** Replaces the contact's custom field answers (a capped set, see custom-field-answers.ts). */
export async function replaceCustomFields(trx: Knex.Transaction, id: number, fields: Record<string, string | boolean>): Promise<void> {
  await trx(CONTACTS).where({ id }).update({ custom_fields: JSON.stringify(fields) });
}

/**
 * The newsletter consent (a confirmed opt-in) of the contact with the confirmed address, as of `now`: the contact
 * with the id, or the environment's contact, if its e-mail is that address (case-insensitive); undefined, and
 * nothing changed, when there is none. Checked and written in one statement, so that a change of the contact's
 * address cannot come in between.
 */
export async function recordNewsletterConsent(
  trx: Knex.Transaction,
  contact: { id: number } | { environment: Environment },
  email: string,
  now: Date,
): Promise<ContactRow | undefined> {
  const [consenting] = await trx(CONTACTS)
    .where(contact)
    .whereRaw('lower(email) = lower(?)', [email])
    .update({ newsletter: true, updated_at: now })
    .returning('*');
  return consenting;
}

/** The environment's contacts, only those changed on or after `updatedSince` when it is given. */
function contactsOf(db: Db, environment: Environment, updatedSince: Date | undefined): Knex.QueryBuilder {
  const builder = db(`${CONTACTS} as ct`).where('ct.environment', environment);
  if (updatedSince) builder.where('ct.updated_at', '>=', updatedSince);
  return builder;
}

/**
 * The number of the environment's contacts (changed since `updatedSince`). Without a date it is the count Postgres
 * keeps per environment (migration 011): counting every contact for each page was a third of the page's time
 * (BENCHMARKS.md).
 */
export async function countContacts(db: Db, environment: Environment, updatedSince: Date | undefined): Promise<number> {
  const [{ count }] = updatedSince
    ? await contactsOf(db, environment, updatedSince).count({ count: '*' })
    : await db(COUNTS).where({ environment }).sum({ count: 'contacts' });
  return Number(count ?? 0);
}

export interface ContactsPageRequest {
  environment: Environment;
  updatedSince: Date | undefined;
  /** What one donation is in the statistics: a position, or a checkout with all its positions. */
  checkouts: CheckoutShape;
  limit: number;
  offset: number;
}

/**
 * One page of contacts by id, with the statistics Postgres keeps per contact and currency (migration 011), folded
 * over the currencies. The page's ids are found first, ordered as the (environment, id) index is, so that OFFSET
 * walks that index alone rather than the contacts.
 */
export function contactsPage(
  db: Db,
  { environment, updatedSince, checkouts, limit, offset }: ContactsPageRequest,
): Promise<ContactWithStatistics[]> {
  const donationCount = checkouts === 'whole-checkout' ? 'sum(t.checkout_count)' : 'sum(t.position_count)';
  const pageIds = contactsOf(db, environment, updatedSince).select('ct.id').orderBy(['ct.environment', 'ct.id']).limit(limit).offset(offset);
  return db
    .from(pageIds.as('page'))
    .join(`${CONTACTS} as ct`, 'ct.id', 'page.id')
    .select(
      'ct.id',
      ...DONOR_FIELDS.map((field) => `ct.${field}`),
      'ct.custom_fields',
      'ct.created_at',
      'stats.donation_count',
      'stats.first_donation_at',
      'stats.last_donation_at',
      'stats.totals',
    )
    .joinRaw(
      `LEFT JOIN LATERAL (
         SELECT ${donationCount} AS donation_count,
                min(t.first_donation_at) AS first_donation_at,
                max(t.last_donation_at) AS last_donation_at,
                json_agg(json_build_object('currency', t.currency, 'amount_minor', t.amount_minor) ORDER BY t.currency)
                  AS totals
         FROM ${DONATION_TOTALS} t
         WHERE t.contact_id = ct.id
       ) stats ON true`,
    )
    .orderBy('ct.id');
}
