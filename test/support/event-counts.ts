import type { Db } from '../../src/db/knex';

const byStatus = async (db: Db, sql: string): Promise<Record<string, number>> =>
  Object.fromEntries(((await db.raw(sql)).rows as Array<{ status: string; events: number }>).map((row) => [row.status, row.events]));

/** Events per status as Postgres keeps them (migration 024), without the statuses no event has. */
export const eventCountsKept = (db: Db) =>
  byStatus(db, 'SELECT status, sum(events)::int AS events FROM webhook_event_counts GROUP BY status HAVING sum(events) <> 0');

/** Events per status, counted afresh. */
export const eventCountsRecounted = (db: Db) => byStatus(db, 'SELECT status, count(*)::int AS events FROM webhook_events GROUP BY status');
