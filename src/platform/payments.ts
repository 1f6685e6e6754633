import type { Knex } from 'knex';
import type { Config } from '../config';
import type { CheckoutModel, DonationModel, PaymentStatus, PaymentType } from '../db/models';
import type { Environment } from '../shared/environment';
import { badRequest } from '../shared/errors';
import { type Donor, pickDonor } from '../shared/donor-fields';
import { toAmount } from '../shared/money';
import { formatTimestamp } from '../shared/time';
import type { PaymentSnapshot } from '../webhooks/payloads/views';
import { existingCampaignIds } from './campaign-store';
import { invoiceReference } from './invoice-reference';

/** A payment (checkout) and its positions (donations) in position order. */
export type StoredPayment = CheckoutModel & { donations: DonationModel[] };

export interface NewPosition {
  amountMinor: number;
  campaignId: number | null;
  purpose: string | null;
  paymentType: PaymentType;
  recurringDonationId: number | null;
}

export interface NewPayment {
  environment: Environment;
  contactId: number;
  /** The donor that every donation event of this payment shows, now and later; only its donor fields are stored. */
  donor: Donor;
  currency: string;
  transactionId: string;
  method: string;
  status: PaymentStatus;
  customFields: Record<string, string | boolean>;
  /** The recurring donation this payment is a follow-up of; null for checkouts made on a form. */
  followUpOf: number | null;
  createdAt: Date;
  invoiceReference: Config['platform']['invoiceReference'];
  positions: NewPosition[];
}

async function nextDonationNumbers(trx: Knex.Transaction, count: number): Promise<string[]> {
  const { rows } = await trx.raw<{ rows: { number: number }[] }>(
    `SELECT nextval('donation_number_seq') AS number FROM generate_series(1, ?::int)`,
    [count],
  );
  return rows.map((row) => row.number).sort((a, b) => a - b).map(String);
}

/** Inserts a checkout and its donations; the checkout's number is its first position's donation number. */
export async function insertPayment(trx: Knex.Transaction, payment: NewPayment): Promise<StoredPayment> {
  const numbers = await nextDonationNumbers(trx, payment.positions.length);
  const [checkout] = await trx('checkouts')
    .insert({
      number: numbers[0],
      environment: payment.environment,
      contact_id: payment.contactId,
      donor: JSON.stringify(pickDonor(payment.donor)),
      currency: payment.currency,
      total_amount_minor: payment.positions.reduce((sum, position) => sum + position.amountMinor, 0),
      transaction_id: payment.transactionId,
      payment_method: payment.method,
      payment_status: payment.status,
      invoice_reference: invoiceReference({
        method: payment.method,
        mode: payment.invoiceReference.mode,
        text: payment.invoiceReference.text,
        purpose: payment.positions.find((position) => position.purpose)?.purpose ?? null,
        paymentNumber: numbers[0],
      }),
      recurring_donation_id: payment.followUpOf,
      custom_fields: JSON.stringify(payment.customFields),
      created_at: payment.createdAt,
    })
    .returning('*');
  const donations = await trx('donations')
    .insert(
      payment.positions.map((position, index) => ({
        number: numbers[index],
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
  return { ...checkout, donations: donations.sort((a: DonationModel, b: DonationModel) => a.position - b.position) };
}

export async function findPaymentByTransactionId(
  trx: Knex.Transaction,
  transactionId: string,
): Promise<StoredPayment | undefined> {
  const checkout: CheckoutModel | undefined = await trx('checkouts').where({ transaction_id: transactionId }).first();
  if (!checkout) return undefined;
  const donations: DonationModel[] = await trx('donations').where({ checkout_id: checkout.id }).orderBy('position');
  // oxlint-disable-next-line typescript/no-misused-spread -- a knex row typed with the model's fields, not an instance
  return { ...checkout, donations } as StoredPayment;
}

/** Refuses positions whose campaign does not exist, naming the first one. */
export async function assertCampaignsExist(trx: Knex.Transaction, campaignIds: (number | null)[]): Promise<void> {
  const wanted = [...new Set(campaignIds.filter((id): id is number => id !== null))];
  if (wanted.length === 0) return;
  const found = await existingCampaignIds(trx, wanted);
  const missing = campaignIds.findIndex((id) => id !== null && !found.has(id));
  if (missing >= 0) {
    throw badRequest(`positions.${missing}.campaign_id: campaign ${campaignIds[missing]} does not exist`, 'unknown_campaign');
  }
}

/**
 * Everything the donation payloads need about one payment. The donor is the one stored with the payment, not the
 * contact as it is now, so that a later event of the payment (donation.reconciled) shows what the first one did.
 */
export async function loadPaymentSnapshot(trx: Knex.Transaction, checkoutId: number): Promise<PaymentSnapshot> {
  const checkout: CheckoutModel = await trx('checkouts').where({ id: checkoutId }).first();
  const positions = await trx('donations as d')
    .leftJoin('campaigns as c', 'c.id', 'd.campaign_id')
    .where('d.checkout_id', checkoutId)
    .orderBy('d.position')
    .select('d.number', 'd.amount_minor', 'd.purpose', 'c.id as campaign_id', 'c.title as campaign_title');
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
      campaign: row.campaign_id === null ? null : { id: row.campaign_id, title: row.campaign_title },
      purpose: row.purpose,
    })),
  };
}

/** What the platform API answers for a payment, on creation and on a repeated call alike. */
export function presentPayment(payment: StoredPayment) {
  return {
    number: payment.number,
    transaction_id: payment.transaction_id,
    environment: payment.environment,
    contact_id: payment.contact_id,
    currency: payment.currency,
    total_amount: toAmount(payment.total_amount_minor),
    payment: { transaction_id: payment.transaction_id, method: payment.payment_method, status: payment.payment_status },
    invoice: payment.invoice_reference,
    recurring_id: payment.recurring_donation_id,
    created_at: formatTimestamp(payment.created_at, 'utc'),
    donations: payment.donations.map((donation) => ({
      number: donation.number,
      position: donation.position,
      amount: toAmount(donation.amount_minor),
      campaign_id: donation.campaign_id,
      purpose: donation.purpose,
      payment_type: donation.payment_type,
      recurring_id: donation.recurring_donation_id,
    })),
  };
}

export type PaymentRecord = ReturnType<typeof presentPayment>;
