import type { Db } from '../../src/db/knex';

const byEnvironment = async (db: Db, sql: string): Promise<Record<string, number>> =>
  Object.fromEntries(
    ((await db.raw(sql)).rows as { environment: string; contacts: string }[]).map((row) => [row.environment, Number(row.contacts)]),
  );

/** Contacts per environment as Postgres keeps them (migration 011). */
export const contactCountsKept = (db: Db) =>
  byEnvironment(db, 'SELECT environment, sum(contacts) AS contacts FROM contact_counts GROUP BY environment');

/** Contacts per environment, counted afresh. */
export const contactCountsRecomputed = (db: Db) =>
  byEnvironment(db, 'SELECT environment, count(*) AS contacts FROM contacts GROUP BY environment');
