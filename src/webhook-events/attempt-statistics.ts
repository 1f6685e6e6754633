import type { Knex } from 'knex';
import { ATTEMPTS } from './tables';

/** Delivery health for the admin page: attempts per hour and outcome, their durations, the last success. */

export interface AttemptsInHour {
  hour: Date;
  delivered: number;
  failed: number;
}

export interface AttemptStatistics {
  /** Attempts in the period, per hour (hours without attempts left out), oldest first. */
  hours: AttemptsInHour[];
  attempts: number;
  delivered: number;
  /** Median and 95th percentile of the attempts' durations; null without attempts. */
  medianMs: number | null;
  p95Ms: number | null;
  /** When the last successful attempt (ever) started. */
  lastDeliveredAt: Date | null;
}

/** Delivery attempts started in [from, to): per hour and outcome, their duration percentiles, and the last success. */
export async function attemptStatistics(db: Knex, from: Date, to: Date): Promise<AttemptStatistics> {
  const inPeriod = () => db(ATTEMPTS).where('started_at', '>=', from).where('started_at', '<', to);
  const [hours, [totals], lastDelivered] = await Promise.all([
    inPeriod()
      .select(db.raw("date_trunc('hour', started_at, 'UTC') AS hour"))
      .select(db.raw("count(*) FILTER (WHERE outcome = 'delivered')::int AS delivered"))
      .select(db.raw("count(*) FILTER (WHERE outcome = 'failed')::int AS failed"))
      .groupByRaw('1')
      .orderByRaw('1') as Promise<AttemptsInHour[]>,
    inPeriod().select(
      db.raw('count(*)::int AS attempts'),
      db.raw("count(*) FILTER (WHERE outcome = 'delivered')::int AS delivered"),
      db.raw('percentile_cont(0.5) WITHIN GROUP (ORDER BY duration_ms) AS median_ms'),
      db.raw('percentile_cont(0.95) WITHIN GROUP (ORDER BY duration_ms) AS p95_ms'),
    ) as Promise<Array<{ attempts: number; delivered: number; median_ms: number | null; p95_ms: number | null }>>,
    db(ATTEMPTS).where('outcome', 'delivered').max<{ max: Date | null }>('started_at as max').first(),
  ]);
  return {
    hours,
    attempts: totals.attempts,
    delivered: totals.delivered,
    medianMs: totals.median_ms,
    p95Ms: totals.p95_ms,
    lastDeliveredAt: lastDelivered?.max ?? null,
  };
}
