import type { Db } from '../db/knex';
import { formatTimestamp } from '../shared/time';
import { type AttemptsInHour, attemptStatistics } from '../webhook-events/attempt-statistics';
import { readFailingStreak, readLastFailure } from '../webhook-events/failing-streak';
import { isEndpointFailing } from '../delivery-rules/endpoint-failing';

const HOUR_MS = 60 * 60 * 1000;

/** The windows the health view offers, in hours. */
export const HEALTH_WINDOWS = { '24h': 24, '7d': 7 * 24 } as const;
export type HealthWindow = keyof typeof HEALTH_WINDOWS;

const utc = (instant: Date) => formatTimestamp(instant, 'utc');

/** Every hour of the window, oldest first, with its attempts (zero where there were none). */
export function hourlyBuckets(firstHourMs: number, hours: number, counted: readonly AttemptsInHour[]) {
  const byHour = new Map(counted.map((hour) => [hour.hour.getTime(), hour]));
  return Array.from({ length: hours }, (_, index) => {
    const startMs = firstHourMs + index * HOUR_MS;
    const found = byHour.get(startMs);
    return { start: utc(new Date(startMs)), delivered: found?.delivered ?? 0, failed: found?.failed ?? 0 };
  });
}

/**
 * Delivery attempts of the last 24 hours or 7 days by hour and outcome (the current hour last, so far), with the
 * success rate, median and 95th percentile of their durations, and when the last attempt that delivered started.
 */
export async function deliveryHealth(db: Db, window: HealthWindow, now: Date) {
  const hours = HEALTH_WINDOWS[window];
  const firstHourMs = Math.floor(now.getTime() / HOUR_MS) * HOUR_MS - (hours - 1) * HOUR_MS;
  const from = new Date(firstHourMs);
  const statistics = await attemptStatistics(db, from, now);
  const round = (ms: number | null) => (ms === null ? null : Math.round(ms));
  return {
    window,
    from: utc(from),
    to: utc(now),
    hours: hourlyBuckets(firstHourMs, hours, statistics.hours),
    attempts: statistics.attempts,
    delivered: statistics.delivered,
    failed: statistics.attempts - statistics.delivered,
    success_rate: statistics.attempts === 0 ? null : statistics.delivered / statistics.attempts,
    median_ms: round(statistics.medianMs),
    p95_ms: round(statistics.p95Ms),
    last_success_at: statistics.lastDeliveredAt && utc(statistics.lastDeliveredAt),
  };
}

/**
 * Whether every attempt has failed for `afterMinutes` (the metric webhook_endpoint_failing reads the same rule), with
 * the last success and the newest failure, for the admin page's banner.
 */
export async function endpointFailing(db: Db, now: Date, afterMinutes: number) {
  const { lastDeliveredAt, failingSince } = await readFailingStreak(db);
  const lastFailure = failingSince && (await readLastFailure(db, failingSince));
  return {
    failing: isEndpointFailing(failingSince, now, afterMinutes),
    failing_after_minutes: afterMinutes,
    failing_since: failingSince && utc(failingSince),
    last_success_at: lastDeliveredAt && utc(lastDeliveredAt),
    last_failure: lastFailure
      ? {
          started_at: utc(lastFailure.startedAt),
          response_code: lastFailure.responseCode,
          error: lastFailure.error,
          response_body_excerpt: lastFailure.responseBodyExcerpt,
        }
      : null,
  };
}
