/**
 * The delivery schedule of the spec, in one place: five attempts in total, and after failed attempt n the next one
 * follows after RETRY_DELAYS_MS[n - 1]. Pure, so the deterministic workflow code can import it.
 */

export const MAX_ATTEMPTS = 5;

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

/** Pauses after failed attempts 1 to 4: 5 minutes, 15 minutes, 1 hour, 4 hours. */
export const RETRY_DELAYS_MS: readonly number[] = [5 * MINUTE_MS, 15 * MINUTE_MS, HOUR_MS, 4 * HOUR_MS];

/** A subscriber that has not answered within this time has failed the attempt. */
export const RESPONSE_TIMEOUT_MS = 30_000;

/** How long to wait after failed scheduled attempt `attempt` (1-based); undefined after the last one. */
export function delayAfterFailedAttempt(attempt: number): number | undefined {
  if (!Number.isInteger(attempt) || attempt < 1 || attempt >= MAX_ATTEMPTS) return undefined;
  return RETRY_DELAYS_MS[attempt - 1];
}
