import type { Knex } from 'knex';

/** The stuck rule of src/delivery-rules/stuck-events.ts as a SQL condition: the admin's filter and the metric use it. */

/**
 * `dueSince` of src/delivery-rules/stuck-events.ts as Postgres computes it; test/webhooks/stuck-events.test.ts holds
 * the two to the same answers. The status condition lets the `(status, id)` index find the few candidates.
 */
const DUE_SINCE_SQL = `CASE WHEN status = 'waiting' AND attempts = 0 THEN coalesce(workflow_started_at, created_at) WHEN status = 'failed' THEN next_attempt_at END`;

/** Narrows `query` (on webhook_events) to the events stuck at `stuckBefore` (stuckCutoff). */
export function whereStuck(query: Knex.QueryBuilder, stuckBefore: Date): Knex.QueryBuilder {
  return query.whereIn('status', ['waiting', 'failed']).whereRaw(`${DUE_SINCE_SQL} < ?`, [stuckBefore]);
}

