import type { Knex } from 'knex';
import type { FailingSince } from '../delivery-rules/endpoint-failing';
import { ATTEMPTS } from './tables';

/**
 * The endpoint's failing streak (src/delivery-rules/endpoint-failing.ts) as Postgres finds it: the last attempt that
 * delivered, and the first failed attempt after it. Read on every scrape of the API's metrics, so each part is one
 * index probe (migration 014b): the newest row of the delivered attempts' partial index, then the first row of the
 * attempts' start index after it, which is a failed attempt unless none followed. Attempts are ordered by their start.
 */

export interface FailingStreak {
  /** When the last attempt that delivered started; null when none ever did (or retention deleted them all). */
  lastDeliveredAt: Date | null;
  failingSince: FailingSince;
}

/** The last failed attempt of a streak: what the subscriber answered, or why nothing came back. */
export interface LastFailure {
  startedAt: Date;
  responseCode: number | null;
  error: string | null;
  /** The start of the answer's body; null when there was none, or it was not kept. */
  responseBodyExcerpt: string | null;
}

/** Characters of the last failure's response body shown: enough to tell an error page from a JSON error. */
const BODY_EXCERPT_CHARS = 300;

export async function readFailingStreak(db: Knex): Promise<FailingStreak> {
  const { rows } = await db.raw<{ rows: Array<{ last_delivered_at: Date | null; failing_since: Date | null }> }>(
    `SELECT d.at AS last_delivered_at,
            (SELECT min(started_at) FROM ${ATTEMPTS} WHERE started_at > coalesce(d.at, '-infinity') AND outcome = 'failed') AS failing_since
     FROM (SELECT max(started_at) AS at FROM ${ATTEMPTS} WHERE outcome = 'delivered') AS d`,
  );
  return { lastDeliveredAt: rows[0].last_delivered_at, failingSince: rows[0].failing_since };
}

/** The newest failed attempt started at or after `since` (a streak's start), by the start index read backwards. */
export async function readLastFailure(db: Knex, since: Date): Promise<LastFailure | undefined> {
  const row = await db(ATTEMPTS)
    .where('started_at', '>=', since)
    .where('outcome', 'failed')
    .orderBy('started_at', 'desc')
    .first('started_at', 'response_code', 'error', db.raw('left(response_body, ?) AS body_excerpt', [BODY_EXCERPT_CHARS]));
  if (!row) return undefined;
  return { startedAt: row.started_at, responseCode: row.response_code, error: row.error, responseBodyExcerpt: row.body_excerpt };
}
