import type { Knex } from 'knex';
import type { Config } from '../config';
import { badRequest } from '../shared/errors';
import { toAmount } from '../shared/money';
import { formatTimestamp } from '../shared/time';
import { campaignTitles } from '../campaign-links/campaign-store';
import { invoiceReference } from './invoice-reference';
import { renderDonationCompleted, renderRecurringCompleted } from '../webhooks/payloads/donation';
import { recordCommandEvents } from './command-events';
import type { CommandResult, PlatformContext } from './context';
import { insertCheckout, type NewCheckout, newPaymentSnapshot, nextDonationNumbers, type StoredPayment } from '../donations/payment-store';

export interface NewPayment extends Omit<NewCheckout, 'numbers' | 'invoiceReference'> {
  /** The product's invoice reference setting; the reference itself follows from the payment's number. */
  invoiceReference: Config['platform']['invoiceReference'];
}

/** Records a checkout and its donations; the checkout's number is its first position's donation number. */
export async function insertPayment(trx: Knex.Transaction, payment: NewPayment): Promise<StoredPayment> {
  const numbers = await nextDonationNumbers(trx, payment.positions.length);
  return insertCheckout(trx, {
    ...payment,
    numbers,
    invoiceReference: invoiceReference({
      method: payment.method,
      mode: payment.invoiceReference.mode,
      text: payment.invoiceReference.text,
      purpose: payment.positions.find((position) => position.purpose)?.purpose ?? null,
      paymentNumber: numbers[0],
    }),
  });
}

/** The titles of the campaigns the positions name, by id; refuses a position whose campaign does not exist, naming the first. */
export async function campaignsOfPositions(trx: Knex.Transaction, campaignIds: (number | null)[]): Promise<ReadonlyMap<number, string>> {
  const titles = await campaignTitles(trx, campaignIds);
  const missing = campaignIds.findIndex((id) => id !== null && !titles.has(id));
  if (missing >= 0) {
    throw badRequest(`positions.${missing}.campaign_id: campaign ${campaignIds[missing]} does not exist`, 'unknown_campaign');
  }
  return titles;
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

const PAYMENT_EVENTS = { 'donation.completed': renderDonationCompleted, 'donation.recurring_completed': renderRecurringCompleted };

/**
 * A new payment's event, rendered from the payment as its insert returned it and the titles of the campaigns its
 * positions name (`campaigns`), and the command's answer.
 */
export async function announcePayment(
  trx: Knex.Transaction,
  ctx: PlatformContext,
  payment: StoredPayment,
  campaigns: ReadonlyMap<number, string>,
  type: keyof typeof PAYMENT_EVENTS,
): Promise<CommandResult<PaymentRecord>> {
  const snapshot = newPaymentSnapshot(payment, campaigns);
  const render = PAYMENT_EVENTS[type];
  await recordCommandEvents(trx, ctx, {
    type,
    environment: payment.environment,
    occurredAt: payment.created_at,
    render: (features) => render(snapshot, features),
  });
  return { created: true, record: presentPayment(payment) };
}
