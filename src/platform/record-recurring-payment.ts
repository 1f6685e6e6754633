import type { Knex } from 'knex';
import { z } from 'zod';
import { ApiError, badRequest, notFound } from '../shared/errors';
import { isAmountIn } from '../shared/money';
import { campaignTitles } from '../campaign-links/campaign-store';
import { findContact } from '../contacts/contact-store';
import type { CommandResult, PlatformCommand } from './context';
import {
  amountPrecisionProblem,
  invalidBodyField,
  minorOf,
  paymentMethodInput,
  paymentStatusInput,
  positiveAmountInput,
  rowIdInput,
  transactionIdInput,
} from './input-schemas';
import { QR_INVOICE_METHOD } from './invoice-reference';
import { answersOfFirstDonation, findPaymentByTransactionId, findRecurringDonation, type StoredPayment } from '../donations/payment-store';
import { announcePayment, insertPayment, type PaymentRecord, presentPayment } from './payments';
import { recordUnderTransactionId, refuseOtherPaymentUnderSameId, transactionIdInUse } from '../donations/transaction-ids';

export const recurringPaymentInput = z.object({
  recurring_id: rowIdInput,
  payment: z.object({
    transaction_id: transactionIdInput,
    // Both follow from the recurring donation; when given they must agree with it.
    method: paymentMethodInput.optional(),
    status: paymentStatusInput.optional(),
  }),
  /** Defaults to the recurring donation's amount. */
  amount: positiveAmountInput.optional(),
});

export type RecurringPaymentInput = z.output<typeof recurringPaymentInput>;

/**
 * An online follow-up payment is made with the method of the first donation and is completed; a recurring QR
 * invoice is pending until paid.
 */
function followUpStatus(method: string): 'completed' | 'pending' {
  return method === QR_INVOICE_METHOD ? 'pending' : 'completed';
}

/** The payment recorded under the call's transaction id, if the call repeats it; a 409 if it is another payment. */
async function answerRepeat(trx: Knex.Transaction, existing: StoredPayment, input: RecurringPaymentInput): Promise<CommandResult<PaymentRecord>> {
  const transactionId = input.payment.transaction_id;
  if (existing.recurring_donation_id === null) throw transactionIdInUse(transactionId, 'a checkout');
  // The recurring donation the payment was recorded for: what an absent amount or method defaults to.
  const recorded = (await findRecurringDonation(trx, existing.recurring_donation_id))!;
  refuseOtherPaymentUnderSameId(
    transactionId,
    { recurring_id: existing.recurring_donation_id, amount: existing.total_amount_minor, 'payment.method': existing.payment_method },
    {
      recurring_id: input.recurring_id,
      amount: input.amount === undefined ? recorded.amount_minor : minorOf(input.amount),
      'payment.method': input.payment.method ?? recorded.payment_method,
    },
  );
  return { created: false, record: presentPayment(existing) };
}

/**
 * A follow-up payment of a recurring donation: a checkout of one recurring_interval position for the recurring
 * donation's contact, campaign and purpose, and its donation.recurring_completed event. It carries the custom
 * field answers given with the first donation. Idempotent on the transaction id: a repeat of the same follow-up
 * (recurring donation, amount, method) is answered with its record, another payment under a used id is a 409.
 */
export const recordRecurringPayment: PlatformCommand<RecurringPaymentInput, PaymentRecord> = async (trx, input, ctx) => {
  const transactionId = input.payment.transaction_id;
  const existing = await recordUnderTransactionId(trx, transactionId, 'payment', findPaymentByTransactionId);
  if (existing) return answerRepeat(trx, existing, input);

  const recurring = await findRecurringDonation(trx, input.recurring_id);
  if (!recurring) throw notFound(`Recurring donation ${input.recurring_id} not found`, 'recurring_donation_not_found');
  if (!recurring.active) {
    throw new ApiError('recurring_donation_inactive', `Recurring donation ${input.recurring_id} is not active`);
  }
  const method = recurring.payment_method;
  const status = followUpStatus(method);
  if (input.payment.method !== undefined && input.payment.method !== method) {
    throw badRequest(`payment.method: must be ${method}, the method of the first donation`);
  }
  if (input.payment.status !== undefined && input.payment.status !== status) {
    throw badRequest(`payment.status: a follow-up payment by ${method} is ${status}`);
  }

  // The recurring donation's own amount was checked when it started; an amount given now is in its currency.
  const amountMinor = input.amount === undefined ? recurring.amount_minor : minorOf(input.amount);
  if (input.amount !== undefined && !isAmountIn(amountMinor, recurring.currency)) {
    throw invalidBodyField('amount', amountPrecisionProblem(recurring.currency));
  }

  const now = ctx.now();
  const payment = await insertPayment(trx, {
    environment: recurring.environment,
    contactId: recurring.contact_id,
    // No donor is given with a follow-up: it is the contact as it is when the payment comes in (it exists: a foreign key).
    donor: (await findContact(trx, recurring.contact_id))!,
    currency: recurring.currency,
    transactionId,
    method,
    status,
    customFields: await answersOfFirstDonation(trx, recurring.id),
    followUpOf: recurring.id,
    createdAt: now,
    invoiceReference: ctx.platform.invoiceReference,
    positions: [
      {
        amountMinor,
        campaignId: recurring.campaign_id,
        purpose: recurring.purpose,
        paymentType: 'recurring_interval',
        recurringDonationId: recurring.id,
      },
    ],
  });
  return announcePayment(trx, ctx, payment, await campaignTitles(trx, [recurring.campaign_id]), 'donation.recurring_completed');
};
