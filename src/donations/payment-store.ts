import type { Knex } from 'knex';
import type { Db } from '../db/knex';
import { DONOR_FIELDS, type Donor, type DonorField, pickDonor } from '../shared/donor-fields';
import type { Environment } from '../shared/environment';
import type { PaymentSnapshot } from '../webhooks/payloads/views';

/*
 * Payments (tables `checkouts`, `donations`, `recurring_donations`, `reconciliations`, sequence
 * `donation_number_seq`): the only module that queries them. A checkout is one payment; its positions are the
 * donations. Reads that list positions join the contact and the campaign they name.
 */

const CHECKOUTS = 'checkouts';
const POSITIONS = 'donations';
const RECURRING_DONATIONS = 'recurring_donations';
const RECONCILIATIONS = 'reconciliations';
const DONATION_NUMBERS = 'donation_number_seq';
const CONTACTS = 'contacts';
const CAMPAIGNS = 'campaigns';

export type PaymentType = 'single' | 'recurring_init' | 'recurring_interval' | 'crowdfunding';
export type PaymentStatus = 'completed' | 'pending';
export type RecurringInterval = 'monthly' | 'quarterly' | 'yearly';

/** A row of `checkouts`: one payment with one or more positions; a multi-checkout when it has more than one. */
export interface CheckoutRow {
  id: number;
  number: string;
  environment: Environment;
  contact_id: number;
  /** The donor as it stood when the payment was recorded (jsonb); every donation event of the payment shows it. */
  donor: Donor;
  currency: string;
  total_amount_minor: number;
  transaction_id: string;
  payment_method: string;
  payment_status: PaymentStatus;
  invoice_reference: string | null;
  recurring_donation_id: number | null;
  custom_fields: Record<string, string | boolean>;
  created_at: Date;
}

/** A row of `donations`: a position of a checkout, what the API and the webhooks call a donation. */
export interface PositionRow {
  id: number;
  number: string;
  checkout_id: number;
  position: number;
  environment: Environment;
  contact_id: number;
  created_at: Date;
  amount_minor: number;
  campaign_id: number | null;
  purpose: string | null;
  payment_type: PaymentType;
  recurring_donation_id: number | null;
}

export interface RecurringDonationRow {
  id: number;
  environment: Environment;
  contact_id: number;
  campaign_id: number | null;
  purpose: string | null;
  amount_minor: number;
  currency: string;
  interval: RecurringInterval;
  payment_method: string;
  active: boolean;
  created_at: Date;
}

export interface ReconciliationRow {
  id: number;
  checkout_id: number;
  paid_out_amount_minor: number;
  fee_amount_minor: number;
  payout_currency: string;
  created_at: Date;
}

/** A payment (checkout) and its positions (donations) in position order. */
export type StoredPayment = CheckoutRow & { donations: PositionRow[] };

export interface NewPosition {
  amountMinor: number;
  campaignId: number | null;
  purpose: string | null;
  paymentType: PaymentType;
  recurringDonationId: number | null;
}

export interface NewCheckout {
  /** The positions' donation numbers, in position order (`nextDonationNumbers`); the first is the checkout's. */
  numbers: string[];
  environment: Environment;
  contactId: number;
  /** The donor that every donation event of this payment shows, now and later; only its donor fields are stored. */
  donor: Donor;
  currency: string;
  transactionId: string;
  method: string;
  status: PaymentStatus;
  invoiceReference: string | null;
  customFields: Record<string, string | boolean>;
  /** The recurring donation this payment is a follow-up of; null for checkouts made on a form. */
  followUpOf: number | null;
  createdAt: Date;
  positions: NewPosition[];
}

export type NewRecurringDonation = Omit<RecurringDonationRow, 'id' | 'active'>;
export type NewReconciliation = Omit<ReconciliationRow, 'id'>;

/** `count` new donation numbers, ascending. */
export async function nextDonationNumbers(trx: Knex.Transaction, count: number): Promise<string[]> {
  const { rows } = await trx.raw<{ rows: { number: number }[] }>(
    `SELECT nextval('${DONATION_NUMBERS}') AS number FROM generate_series(1, ?::int)`,
    [count],
  );
  return rows.map((row) => row.number).sort((a, b) => a - b).map(String);
}

/** Inserts a checkout and its donations; the checkout's number is its first position's donation number. */
export async function insertCheckout(trx: Knex.Transaction, payment: NewCheckout): Promise<StoredPayment> {
  const [checkout]: CheckoutRow[] = await trx(CHECKOUTS)
    .insert({
      number: payment.numbers[0],
      environment: payment.environment,
      contact_id: payment.contactId,
      donor: JSON.stringify(pickDonor(payment.donor)),
      currency: payment.currency,
      total_amount_minor: payment.positions.reduce((sum, position) => sum + position.amountMinor, 0),
      transaction_id: payment.transactionId,
      payment_method: payment.method,
      payment_status: payment.status,
      invoice_reference: payment.invoiceReference,
      recurring_donation_id: payment.followUpOf,
      custom_fields: JSON.stringify(payment.customFields),
      created_at: payment.createdAt,
    })
    .returning('*');
  const donations: PositionRow[] = await trx(POSITIONS)
    .insert(
      payment.positions.map((position, index) => ({
        number: payment.numbers[index],
        checkout_id: checkout.id,
        position: index + 1,
        environment: payment.environment,
        contact_id: payment.contactId,
        created_at: payment.createdAt,
        amount_minor: position.amountMinor,
        campaign_id: position.campaignId,
        purpose: position.purpose,
        payment_type: position.paymentType,
        recurring_donation_id: position.recurringDonationId,
      })),
    )
    .returning('*');
  return { ...checkout, donations: donations.sort((a, b) => a.position - b.position) };
}

export async function findPaymentByTransactionId(
  trx: Knex.Transaction,
  transactionId: string,
): Promise<StoredPayment | undefined> {
  const checkout: CheckoutRow | undefined = await trx(CHECKOUTS).where({ transaction_id: transactionId }).first();
  if (!checkout) return undefined;
  const donations: PositionRow[] = await trx(POSITIONS).where({ checkout_id: checkout.id }).orderBy('position');
  return { ...checkout, donations };
}

/** A position as the donation payloads show it: its campaign joined (null when it names none, or none that exists). */
interface SnapshotPosition {
  number: string;
  amount_minor: number;
  purpose: string | null;
  campaign_id: number | null;
  campaign_title: string | null;
}

/**
 * Everything the donation payloads need about one payment, from its rows. The donor is the one stored with the
 * payment, not the contact as it is now, so that a later event of the payment (donation.reconciled) shows what the
 * first one did.
 */
function paymentSnapshot(checkout: CheckoutRow, positions: SnapshotPosition[]): PaymentSnapshot {
  return {
    number: checkout.number,
    createdAt: checkout.created_at,
    currency: checkout.currency,
    donor: pickDonor(checkout.donor),
    customFields: checkout.custom_fields,
    payment: { transactionId: checkout.transaction_id, method: checkout.payment_method, status: checkout.payment_status },
    invoice: checkout.invoice_reference,
    positions: positions.map((row) => ({
      number: row.number,
      amountMinor: row.amount_minor,
      campaign: row.campaign_id === null ? null : { id: row.campaign_id, title: row.campaign_title! },
      purpose: row.purpose,
    })),
  };
}

/** The snapshot of a payment recorded earlier (see paymentSnapshot). */
export async function loadPaymentSnapshot(trx: Knex.Transaction, checkoutId: number): Promise<PaymentSnapshot> {
  const checkout: CheckoutRow = await trx(CHECKOUTS).where({ id: checkoutId }).first();
  const positions: SnapshotPosition[] = await trx(`${POSITIONS} as d`)
    .leftJoin(`${CAMPAIGNS} as c`, 'c.id', 'd.campaign_id')
    .where('d.checkout_id', checkoutId)
    .orderBy('d.position')
    .select('d.number', 'd.amount_minor', 'd.purpose', 'c.id as campaign_id', 'c.title as campaign_title');
  return paymentSnapshot(checkout, positions);
}

/**
 * The snapshot of a payment just inserted, from the rows its insert returned and the titles of the campaigns its
 * positions name: what loadPaymentSnapshot would read back, without two more round trips on the platform call.
 */
export function newPaymentSnapshot(payment: StoredPayment, campaignTitles: ReadonlyMap<number, string>): PaymentSnapshot {
  return paymentSnapshot(
    payment,
    payment.donations.map((donation) => {
      const title = donation.campaign_id === null ? undefined : campaignTitles.get(donation.campaign_id);
      return { ...donation, campaign_id: title === undefined ? null : donation.campaign_id, campaign_title: title ?? null };
    }),
  );
}

/** Inserts an active recurring donation; its id. */
export async function insertRecurringDonation(trx: Knex.Transaction, recurring: NewRecurringDonation): Promise<number> {
  const [{ id }] = await trx(RECURRING_DONATIONS).insert(recurring).returning('id');
  return id;
}

export async function findRecurringDonation(trx: Knex.Transaction, id: number): Promise<RecurringDonationRow | undefined> {
  return trx(RECURRING_DONATIONS).where({ id }).first();
}

/** The custom field answers given with the payment that started the recurring donation. */
export async function answersOfFirstDonation(trx: Knex.Transaction, recurringId: number): Promise<Record<string, string | boolean>> {
  const first = await trx(`${CHECKOUTS} as c`)
    .join(`${POSITIONS} as d`, 'd.checkout_id', 'c.id')
    .where({ 'd.recurring_donation_id': recurringId, 'd.payment_type': 'recurring_init' })
    .first('c.custom_fields');
  return first?.custom_fields ?? {};
}

/**
 * The contact's latest answer to each custom field name, from the checkouts made on a form (a follow-up repeats the
 * answers of the first payment), for the `limit` most recently answered names: by the time of the latest checkout
 * that answered them, ties by name.
 */
export async function latestCustomFieldAnswers(
  trx: Knex.Transaction,
  contactId: number,
  limit: number,
): Promise<Record<string, string | boolean>> {
  const { rows } = await trx.raw<{ rows: { key: string; value: string | boolean }[] }>(
    `SELECT key, value FROM (
       SELECT DISTINCT ON (f.key) f.key, f.value, c.created_at, c.id
         FROM ${CHECKOUTS} c CROSS JOIN LATERAL jsonb_each(c.custom_fields) f
        WHERE c.contact_id = ? AND c.recurring_donation_id IS NULL
        ORDER BY f.key, c.created_at DESC, c.id DESC
     ) latest
     ORDER BY created_at DESC, id DESC, key
     LIMIT ?`,
    [contactId, limit],
  );
  return Object.fromEntries(rows.map(({ key, value }) => [key, value]));
}

export async function isReconciled(trx: Knex.Transaction, checkoutId: number): Promise<boolean> {
  return (await trx(RECONCILIATIONS).where({ checkout_id: checkoutId }).first()) !== undefined;
}

export async function insertReconciliation(trx: Knex.Transaction, reconciliation: NewReconciliation): Promise<ReconciliationRow> {
  const [row]: ReconciliationRow[] = await trx(RECONCILIATIONS).insert(reconciliation).returning('*');
  return row;
}

/** The donor's fields under a `donor_` prefix, beside the columns of the other tables. */
export type DonorColumns = { [F in DonorField as `donor_${F}`]: Donor[F] };

/** One position with its checkout, contact, campaign and recurring donation: everything a donation entry shows. */
export interface DonationRow extends DonorColumns {
  number: string;
  position: number;
  environment: Environment;
  created_at: Date;
  amount_minor: number;
  purpose: string | null;
  payment_type: PaymentType;
  contact_id: number;
  campaign_id: number | null;
  campaign_title: string | null;
  checkout_id: number;
  checkout_number: string;
  checkout_total_minor: number;
  currency: string;
  transaction_id: string;
  payment_method: string;
  payment_status: PaymentStatus;
  invoice_reference: string | null;
  custom_fields: Record<string, string | boolean>;
  recurring_id: number | null;
  recurring_interval: RecurringInterval | null;
}

const DONATION_ROW_COLUMNS = [
  'd.number',
  'd.position',
  'd.environment',
  'd.created_at',
  'd.amount_minor',
  'd.purpose',
  'd.payment_type',
  'd.contact_id',
  'cp.id as campaign_id',
  'cp.title as campaign_title',
  'c.id as checkout_id',
  'c.number as checkout_number',
  'c.total_amount_minor as checkout_total_minor',
  'c.currency',
  'c.transaction_id',
  'c.payment_method',
  'c.payment_status',
  'c.invoice_reference',
  'c.custom_fields',
  'rd.id as recurring_id',
  'rd.interval as recurring_interval',
  ...DONOR_FIELDS.map((field) => `ct.${field} as donor_${field}`),
];

/** Positions joined to what their entries show; callers add the filter and the order. */
function donationRows(db: Db): Knex.QueryBuilder {
  return db(`${POSITIONS} as d`)
    .join(`${CHECKOUTS} as c`, 'c.id', 'd.checkout_id')
    .join(`${CONTACTS} as ct`, 'ct.id', 'd.contact_id')
    .leftJoin(`${CAMPAIGNS} as cp`, 'cp.id', 'd.campaign_id')
    .leftJoin(`${RECURRING_DONATIONS} as rd`, 'rd.id', 'd.recurring_donation_id')
    .select(DONATION_ROW_COLUMNS);
}

/**
 * Positions created in [start, end), in output order: time, then number (same-width numbers from one sequence).
 * A query builder, so that the caller can stream it (`.stream()`) or compile it (`.toSQL()`).
 */
export function donationRowsInPeriod(db: Db, environment: Environment, start: Date, end: Date): Knex.QueryBuilder {
  return donationRows(db)
    .where('d.environment', environment)
    .where('d.created_at', '>=', start)
    .where('d.created_at', '<', end)
    .orderBy([{ column: 'd.created_at' }, { column: 'd.number' }]);
}

/** All positions of one contact, each checkout's positions together and in position order. */
export function donationRowsOfContact(db: Db, environment: Environment, contactId: number): Promise<DonationRow[]> {
  return donationRows(db)
    .where('d.contact_id', contactId)
    .where('d.environment', environment)
    .orderBy([{ column: 'c.created_at' }, { column: 'c.id' }, { column: 'd.position' }]);
}
