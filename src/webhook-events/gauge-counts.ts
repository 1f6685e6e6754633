import type { Knex } from 'knex';
import { whereStuck } from './stuck-condition';
import { COUNTS, EVENTS } from './tables';

/** The counts the metrics' gauges read when scraped: events by status, the outbox backlog, stuck events. */

/** Events per delivery status, as the triggers keep them: a few rows, however many events are kept (migration 024). */
export async function countEventsByStatus(db: Knex): Promise<Map<string, number>> {
  const rows = await db(COUNTS).select('status').sum<Array<{ status: string; count: string }>>({ count: 'events' }).groupBy('status');
  return new Map(rows.map((row) => [row.status, Number(row.count)]));
}

// These two read the partial index of unstarted events, which the relay keeps small.

/** Events whose delivery workflow the relay has not started yet. */
export async function countUnstartedEvents(db: Knex): Promise<number> {
  const [row] = await db(EVENTS).whereNull('workflow_started_at').count<Array<{ count: string }>>({ count: '*' });
  return Number(row.count);
}

/** Age in seconds of the oldest event still waiting for the relay; 0 when none waits. */
export async function oldestUnstartedEventAgeSeconds(db: Knex): Promise<number> {
  const { rows } = await db.raw<{ rows: Array<{ age: number }> }>(
    `SELECT coalesce(extract(epoch FROM now() - min(created_at)), 0)::float8 AS age FROM ${EVENTS} WHERE workflow_started_at IS NULL`,
  );
  return Number(rows[0].age);
}

/** Stuck events per status (waiting, failed), for the metric. */
export async function countStuckEvents(db: Knex, stuckBefore: Date): Promise<Map<string, number>> {
  const rows = await whereStuck(db(EVENTS), stuckBefore).select('status').count<Array<{ status: string; count: string }>>({ count: '*' }).groupBy('status');
  return new Map(rows.map((row) => [row.status, Number(row.count)]));
}
