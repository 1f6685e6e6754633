import type { Knex } from 'knex';

const UNIQUE_VIOLATION = '23505';

function isUniqueViolation(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === UNIQUE_VIOLATION;
}

/**
 * Runs a platform command in one transaction. When a concurrent call with the same natural key committed first,
 * the insert hits a unique index and the whole transaction rolls back; the command then runs once more and finds
 * the committed record, so two identical calls racing each other still create everything exactly once.
 */
export async function runCommand<T>(db: Knex, command: (trx: Knex.Transaction) => Promise<T>): Promise<T> {
  try {
    return await db.transaction(command);
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    return db.transaction(command);
  }
}
