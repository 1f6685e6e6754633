import { z } from 'zod';
import { ApiError, notFound } from '../shared/errors';
import { toAmount } from '../shared/money';
import { formatTimestamp } from '../shared/time';
import { renderDonationReconciled } from '../webhooks/payloads/donation';
import { recordCommandEvents } from './command-events';
import type { PlatformCommand } from './context';
import { currencyInput, minorOf, nonNegativeAmountInput, refineAmountsIn, transactionIdInput } from './input-schemas';
import { QR_INVOICE_METHOD } from './invoice-reference';
import {
  findPaymentByTransactionId,
  insertReconciliation,
  isReconciled,
  loadPaymentSnapshot,
  type ReconciliationRow,
} from '../donations/payment-store';

export const reconciliationInput = z
  .object({
    transaction_id: transactionIdInput,
    paid_out_amount: nonNegativeAmountInput,
    fee_amount: nonNegativeAmountInput,
    /** The provider's payout currency, which may differ from the donation currency: both amounts are in it. */
    payout_currency: currencyInput,
  })
  .superRefine((input, issues) => {
    const amounts = (['paid_out_amount', 'fee_amount'] as const).map((field) => ({ path: [field], amount: input[field] }));
    refineAmountsIn(input.payout_currency, amounts, issues);
  });

export type ReconciliationInput = z.output<typeof reconciliationInput>;

function presentReconciliation(transactionId: string, paymentNumber: string, row: ReconciliationRow) {
  return {
    transaction_id: transactionId,
    number: paymentNumber,
    paid_out_amount: toAmount(row.paid_out_amount_minor),
    fee_amount: toAmount(row.fee_amount_minor),
    payout_currency: row.payout_currency,
    created_at: formatTimestamp(row.created_at, 'utc'),
  };
}

export type ReconciliationRecord = ReturnType<typeof presentReconciliation>;

/**
 * Fee and payout of one completed online payment, reported by its provider exactly once (a second report is a
 * 409; a QR invoice or a pending payment is a 409 too), and the
 * donation.reconciled events. These are rows of their own: they may be delivered before the originating
 * donation event when that one is still being retried.
 */
export const recordReconciliation: PlatformCommand<ReconciliationInput, ReconciliationRecord> = async (trx, input, ctx) => {
  const payment = await findPaymentByTransactionId(trx, input.transaction_id);
  if (!payment) throw notFound(`No payment with transaction_id ${input.transaction_id}`, 'payment_not_found');
  // Only payment providers report payout and fee, and only of money they collected: a QR invoice has neither.
  if (payment.payment_status !== 'completed' || payment.payment_method === QR_INVOICE_METHOD) {
    throw new ApiError('not_reconcilable',
      `Payment ${input.transaction_id} (${payment.payment_method}, ${payment.payment_status}) cannot be reconciled: ` +
        'only completed payments through an online payment provider can',
    );
  }
  if (await isReconciled(trx, payment.id)) throw new ApiError('already_reconciled', 'This payment has already been reconciled');

  const now = ctx.now();
  const row = await insertReconciliation(trx, {
    checkout_id: payment.id,
    paid_out_amount_minor: minorOf(input.paid_out_amount),
    fee_amount_minor: minorOf(input.fee_amount),
    payout_currency: input.payout_currency,
    created_at: now,
  });
  const snapshot = await loadPaymentSnapshot(trx, payment.id);
  await recordCommandEvents(trx, ctx, {
    type: 'donation.reconciled',
    environment: payment.environment,
    occurredAt: now,
    render: (features) =>
      renderDonationReconciled(
        snapshot,
        { paidOutMinor: row.paid_out_amount_minor, feeMinor: row.fee_amount_minor, currency: row.payout_currency },
        features,
      ),
  });
  return { created: true, record: presentReconciliation(payment.transaction_id, payment.number, row) };
};
