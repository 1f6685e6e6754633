import type { Knex } from 'knex';
import { isDeepStrictEqual } from 'node:util';
import { ApiError, MAX_REPORTED_PROBLEMS } from '../shared/errors';
import { holderOfTransactionId, type TransactionIdHolder } from './transaction-id-store';

/*
 * The transaction id as idempotency key (docs/platform-api.md): a repeat of a recorded payment is answered with its
 * record only when it is the same payment. What makes it the same are its material fields, by body path; each
 * command says which it has, with nested values named as in the body, so that a 409 can name the deepest field that
 * differs. Everything else (names, addresses, custom field answers, a QR invoice's status) may differ in a repeat,
 * and the record stands as first recorded.
 */

export type MaterialFields = Record<string, unknown>;

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The deepest body paths at which two values differ (`positions.0.amount`): objects are compared field by field,
 * lists of one length entry by entry; lists of different lengths, or values of different kinds, differ as a whole.
 */
function differingPaths(path: string, recorded: unknown, repeated: unknown): string[] {
  if (isDeepStrictEqual(recorded, repeated)) return [];
  if (Array.isArray(recorded) && Array.isArray(repeated) && recorded.length === repeated.length) {
    return recorded.flatMap((entry, index) => differingPaths(`${path}.${index}`, entry, repeated[index]));
  }
  if (isRecord(recorded) && isRecord(repeated)) {
    return [...new Set([...Object.keys(recorded), ...Object.keys(repeated)])].flatMap((key) => differingPaths(`${path}.${key}`, recorded[key], repeated[key]));
  }
  return [path];
}

/** The body paths of the material fields in which the repeat differs from the recorded payment, as deep as they go. */
function materialDifferences(recorded: MaterialFields, repeated: MaterialFields): string[] {
  return Object.keys(recorded).flatMap((path) => differingPaths(path, recorded[path], repeated[path]));
}

/**
 * A 409 unless the repeat is the recorded payment in every material field; the problems name the fields that differ
 * (the first ten, as a 400 names its problems).
 */
export function refuseOtherPaymentUnderSameId(transactionId: string, recorded: MaterialFields, repeated: MaterialFields): void {
  const differences = materialDifferences(recorded, repeated);
  if (differences.length === 0) return;
  const reported = differences.slice(0, MAX_REPORTED_PROBLEMS);
  const more = differences.length - reported.length;
  throw new ApiError(
    'transaction_id_reused',
    `Transaction id ${transactionId} was recorded for another payment: ${reported.join(', ')}${more > 0 ? ` and ${more} more fields` : ''} differ`,
    {},
    reported.map((name) => ({ in: 'body', name, message: 'differs from the payment recorded under this transaction id' })),
  );
}

export function transactionIdInUse(transactionId: string, heldBy: string): ApiError {
  return new ApiError('transaction_id_in_use', `Transaction id ${transactionId} belongs to ${heldBy}`);
}

const HELD_BY: Record<TransactionIdHolder, string> = {
  payment: 'a donation payment (a checkout or a recurring follow-up)',
  shop_order: 'a shop order',
};

/**
 * The record of the caller's kind under the transaction id (read by `find`; the caller then answers the repeat),
 * undefined for a new id, and a 409 when a record of another kind holds it: one namespace for every payment. The id is
 * looked up before the caller's own record: an id and its record are committed together, so once the id is seen, so
 * is the record, and a payment committed a moment ago by a concurrent call is never taken for one of another kind.
 */
export async function recordUnderTransactionId<R>(
  trx: Knex.Transaction,
  transactionId: string,
  kind: TransactionIdHolder,
  find: (trx: Knex.Transaction, transactionId: string) => Promise<R | undefined>,
): Promise<R | undefined> {
  const holder = await holderOfTransactionId(trx, transactionId);
  if (holder !== undefined && holder !== kind) throw transactionIdInUse(transactionId, HELD_BY[holder]);
  return holder === kind ? find(trx, transactionId) : undefined;
}
