import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import type { Gender } from '../shared/donor-fields';
import type { Environment } from '../shared/environment';
import { type SignUpFields, UNLINKED_SIGN_UP_ENVIRONMENT } from '../webhooks/payloads/newsletter';

/*
 * Newsletter sign-ups (table `newsletter_subscriptions`): the only module that queries it. The read API's list joins
 * the contact a sign-up is linked to.
 */

const SIGN_UPS = 'newsletter_subscriptions';
const CONTACTS = 'contacts';

/** A row of `newsletter_subscriptions` (gender empty when not given): unconfirmed until the click in the confirmation mail. */
export interface SignUpRow extends Omit<SignUpFields, 'confirmed_at'> {
  channel: string;
  confirmed_at: Date | null;
  created_at: Date;
}

export type NewSignUp = Omit<SignUpRow, 'id' | 'confirmed_at'>;

/** A confirmed sign-up with the fields of its linked contact (all null when there is none). */
export interface ConfirmedSignUpRow extends SignUpFields {
  contact_gender: Gender | null;
  contact_first_name: string | null;
  contact_last_name: string | null;
  contact_email: string | null;
  contact_language: string | null;
}

/**
 * Waits for other transactions signing up the address (case-insensitive) until this one ends: the table has no
 * unique index on it, so this is what keeps concurrent sign-ups of one address from creating two.
 */
export async function lockSignUpsOf(trx: Knex.Transaction, email: string): Promise<void> {
  await trx.raw(`SELECT pg_advisory_xact_lock(hashtextextended('newsletter:' || lower(?), 0))`, [email]);
}

/** The first sign-up of the address (case-insensitive), confirmed or not. */
export async function findFirstSignUpOf(trx: Knex.Transaction, email: string): Promise<SignUpRow | undefined> {
  return trx(SIGN_UPS).whereRaw('lower(email) = lower(?)', [email]).orderBy('id').first();
}

export async function insertSignUp(trx: Knex.Transaction, signUp: NewSignUp): Promise<SignUpRow> {
  const [row]: SignUpRow[] = await trx(SIGN_UPS).insert(signUp).returning('*');
  return row;
}

/** The sign-up, locked until the transaction ends, so that two simultaneous confirmations run one after the other. */
export async function findSignUpForUpdate(trx: Knex.Transaction, id: number): Promise<SignUpRow | undefined> {
  return trx(SIGN_UPS).where({ id }).forUpdate().first();
}

/** Confirms the sign-up, linked to the contact whose consent it is (null: none). */
export async function markSignUpConfirmed(trx: Knex.Transaction, id: number, confirmedAt: Date, contactId: number | null): Promise<SignUpRow> {
  const [row]: SignUpRow[] = await trx(SIGN_UPS).where({ id }).update({ confirmed_at: confirmedAt, contact_id: contactId }).returning('*');
  return row;
}

export interface ConfirmedSignUpFilter {
  environment: Environment;
  /** Confirmed at or after. */
  confirmedFrom: Date | undefined;
  /** Confirmed before. */
  confirmedBefore: Date | undefined;
}

/**
 * Confirmed sign-ups of one environment by the rule of `signUpEnvironment` (the contact's environment, PRODUCTION
 * without a contact), the same that sets their events' envelope environment, so every sign-up is listed exactly once.
 */
function confirmedSignUps(db: Db, { environment, confirmedFrom, confirmedBefore }: ConfirmedSignUpFilter): Knex.QueryBuilder {
  const builder = db(`${SIGN_UPS} as ns`)
    .leftJoin(`${CONTACTS} as ct`, 'ct.id', 'ns.contact_id')
    .whereNotNull('ns.confirmed_at')
    .whereRaw('coalesce(ct.environment, ?) = ?', [UNLINKED_SIGN_UP_ENVIRONMENT, environment]);
  if (confirmedFrom) builder.where('ns.confirmed_at', '>=', confirmedFrom);
  if (confirmedBefore) builder.where('ns.confirmed_at', '<', confirmedBefore);
  return builder;
}

export async function countConfirmedSignUps(db: Db, filter: ConfirmedSignUpFilter): Promise<number> {
  const [{ count }] = await confirmedSignUps(db, filter).count({ count: '*' });
  return Number(count);
}

/** One page of confirmed sign-ups, by confirmation time, then id. */
export async function confirmedSignUpsPage(
  db: Db,
  { limit, offset, ...filter }: ConfirmedSignUpFilter & { limit: number; offset: number },
): Promise<ConfirmedSignUpRow[]> {
  return confirmedSignUps(db, filter)
    .select(
      'ns.id',
      'ns.contact_id',
      'ns.gender',
      'ns.first_name',
      'ns.last_name',
      'ns.email',
      'ns.language',
      'ns.confirmed_at',
      'ct.gender as contact_gender',
      'ct.first_name as contact_first_name',
      'ct.last_name as contact_last_name',
      'ct.email as contact_email',
      'ct.language as contact_language',
    )
    .orderBy([{ column: 'ns.confirmed_at' }, { column: 'ns.id' }])
    .limit(limit)
    .offset(offset);
}
