import { z } from 'zod';
import type { Knex } from 'knex';
import { badRequest } from '../shared/errors';
import { upsertContact } from '../contacts/contact-store';
import { capContactCustomFields } from './custom-field-answers';
import type { CommandResult, PlatformCommand } from './context';
import {
  currencyInput,
  donorInput,
  environmentInput,
  minorOf,
  optionalText,
  paymentMethodInput,
  paymentStatusInput,
  positiveAmountInput,
  refineAmountsIn,
  requiredText,
  rowIdInput,
  transactionIdInput,
} from './input-schemas';
import { QR_INVOICE_METHOD } from './invoice-reference';
import { findPaymentByTransactionId, findRecurringDonation, insertRecurringDonation, type StoredPayment } from '../donations/payment-store';
import { announcePayment, campaignsOfPositions, insertPayment, type PaymentRecord, presentPayment } from './payments';
import {
  type MaterialFields,
  refuseOtherPaymentUnderSameId,
  recordUnderTransactionId,
  transactionIdInUse,
} from '../donations/transaction-ids';

const positionInput = z.object({
  amount: positiveAmountInput,
  campaign_id: rowIdInput.nullable().default(null),
  purpose: optionalText(200),
  // Follow-up payments of a recurring donation are recorded through the recurring-payments call, not here.
  payment_type: z.enum(['single', 'recurring_init', 'crowdfunding']).default('single'),
  /** Required exactly when payment_type is recurring_init: the recurring donation this first payment starts. */
  recurring: z.object({ interval: z.enum(['monthly', 'quarterly', 'yearly']) }).optional(),
});

export const checkoutInput = z
  .object({
    environment: environmentInput,
    currency: currencyInput,
    donor: donorInput,
    positions: z.array(positionInput).min(1).max(50),
    payment: z.object({
      transaction_id: transactionIdInput,
      method: paymentMethodInput,
      status: paymentStatusInput.default('completed'),
    }),
    /** Overrides the platform's invoice reference mode for this product (QR invoices only). */
    invoice_reference_mode: z.enum(['qr', 'text', 'purpose']).optional(),
    invoice_reference_text: requiredText(140).optional(),
  })
  .superRefine((input, issues) => {
    const amounts = input.positions.map((position, index) => ({ path: ['positions', index, 'amount'], amount: position.amount }));
    refineAmountsIn(input.currency, amounts, issues);
    input.positions.forEach((position, index) => {
      if ((position.payment_type === 'recurring_init') !== (position.recurring !== undefined)) {
        issues.addIssue({
          code: 'custom',
          path: ['positions', index, 'recurring'],
          message: 'is required with payment_type recurring_init and allowed only there',
        });
      }
      if (position.payment_type === 'recurring_init' && input.positions.length > 1) {
        issues.addIssue({
          code: 'custom',
          path: ['positions', index, 'payment_type'],
          message: 'a recurring donation cannot be part of a multi-checkout',
        });
      }
    });
    if (input.payment.status === 'pending' && input.payment.method !== QR_INVOICE_METHOD) {
      issues.addIssue({ code: 'custom', path: ['payment', 'status'], message: 'only a QR invoice (INV) can be pending' });
    }
  });

export type CheckoutInput = z.output<typeof checkoutInput>;

/** A position's material fields, named as in the body (`positions.0.recurring.interval`); amounts in minor units. */
interface PositionFields {
  amount: number;
  campaign_id: number | null;
  purpose: string | null;
  payment_type: string;
  recurring: { interval: string } | null;
}

/** What makes a checkout the same payment: environment, currency, donor (the contact's key), method and positions. */
const checkoutMaterial = (payment: { environment: string; currency: string; email: string; method: string; positions: PositionFields[] }): MaterialFields => ({
  environment: payment.environment,
  currency: payment.currency,
  'donor.email': payment.email.toLowerCase(),
  'payment.method': payment.method,
  positions: payment.positions,
});

const requestedCheckout = (input: CheckoutInput) =>
  checkoutMaterial({
    ...input,
    email: input.donor.email,
    method: input.payment.method,
    positions: input.positions.map((position) => ({
      amount: minorOf(position.amount),
      campaign_id: position.campaign_id,
      purpose: position.purpose,
      payment_type: position.payment_type,
      recurring: position.recurring ? { interval: position.recurring.interval } : null,
    })),
  });

async function recordedCheckout(trx: Knex.Transaction, payment: StoredPayment): Promise<MaterialFields> {
  const positions: PositionFields[] = [];
  for (const donation of payment.donations) {
    const recurring = donation.recurring_donation_id === null ? undefined : await findRecurringDonation(trx, donation.recurring_donation_id);
    positions.push({
      amount: donation.amount_minor,
      campaign_id: donation.campaign_id,
      purpose: donation.purpose,
      payment_type: donation.payment_type,
      recurring: recurring ? { interval: recurring.interval } : null,
    });
  }
  return checkoutMaterial({ ...payment, email: payment.donor.email, method: payment.payment_method, positions });
}

/** The payment recorded under the call's transaction id, if the call repeats it; a 409 if it is another payment. */
async function answerRepeat(trx: Knex.Transaction, existing: StoredPayment, input: CheckoutInput): Promise<CommandResult<PaymentRecord>> {
  const transactionId = input.payment.transaction_id;
  if (existing.recurring_donation_id !== null) throw transactionIdInUse(transactionId, 'a recurring follow-up payment');
  refuseOtherPaymentUnderSameId(transactionId, await recordedCheckout(trx, existing), requestedCheckout(input));
  return { created: false, record: presentPayment(existing) };
}

/**
 * A completed (or pending QR-invoice) payment with one or more positions: finds or updates the donor's contact,
 * writes the checkout, its donations, a recurring donation for a recurring_init position, and the
 * donation.completed events. Idempotent on the transaction id: a repeat of the same payment is answered with its
 * record, another payment under a used id is a 409.
 */
export const recordCheckout: PlatformCommand<CheckoutInput, PaymentRecord> = async (trx, input, ctx) => {
  const transactionId = input.payment.transaction_id;
  const existing = await recordUnderTransactionId(trx, transactionId, 'payment', findPaymentByTransactionId);
  if (existing) return answerRepeat(trx, existing, input);

  const invoiceSettings = {
    mode: input.invoice_reference_mode ?? ctx.platform.invoiceReference.mode,
    text: input.invoice_reference_text ?? ctx.platform.invoiceReference.text,
  };
  // The reference mode is a setting of the product; only a QR invoice prints a reference and needs the text.
  if (input.payment.method === QR_INVOICE_METHOD && invoiceSettings.mode === 'text' && !invoiceSettings.text) {
    throw badRequest('invoice_reference_text is required: the platform has no invoice reference text configured');
  }
  const campaigns = await campaignsOfPositions(trx, input.positions.map((position) => position.campaign_id));

  const now = ctx.now();
  const contact = await upsertContact(trx, input.environment, input.donor, now);
  const positions = [];
  for (const position of input.positions) {
    const amountMinor = minorOf(position.amount);
    const recurringDonationId = position.recurring
      ? await insertRecurringDonation(trx, {
          environment: input.environment,
          contact_id: contact.id,
          campaign_id: position.campaign_id,
          purpose: position.purpose,
          amount_minor: amountMinor,
          currency: input.currency,
          interval: position.recurring.interval,
          payment_method: input.payment.method,
          created_at: now,
        })
      : null;
    positions.push({
      amountMinor,
      campaignId: position.campaign_id,
      purpose: position.purpose,
      paymentType: position.payment_type,
      recurringDonationId,
    });
  }

  const payment = await insertPayment(trx, {
    environment: input.environment,
    contactId: contact.id,
    // The donor as given, except that consent given before stays (the contact after the upsert).
    donor: contact,
    currency: input.currency,
    transactionId,
    method: input.payment.method,
    status: input.payment.status,
    customFields: input.donor.custom_fields,
    followUpOf: null,
    createdAt: now,
    invoiceReference: invoiceSettings,
    positions,
  });
  await capContactCustomFields(trx, contact);
  return announcePayment(trx, ctx, payment, campaigns, 'donation.completed');
};
