import type { Knex } from 'knex';

/*
 * The one namespace of transaction ids (table `transaction_ids`, kept by the triggers of migration 019 on `checkouts`
 * and `shop_orders`, so only read here): the only module that queries it.
 */

const TRANSACTION_IDS = 'transaction_ids';

/** The table that holds a transaction id: `payment` for checkouts and recurring follow-ups, or a shop order. */
export type TransactionIdHolder = 'payment' | 'shop_order';

/** Which kind of record holds the transaction id, if any does. */
export async function holderOfTransactionId(trx: Knex.Transaction, transactionId: string): Promise<TransactionIdHolder | undefined> {
  const row = await trx(TRANSACTION_IDS).where({ transaction_id: transactionId }).first('holder');
  return row?.holder;
}
