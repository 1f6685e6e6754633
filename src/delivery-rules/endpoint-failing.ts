/**
 * A failing endpoint: every attempt to it has failed for ENDPOINT_FAILING_AFTER_MINUTES. Its failing streak begins at
 * the first failed attempt after the last one that delivered (or after none, when none ever did); one attempt that
 * delivers ends it. The metric webhook_endpoint_failing, its alert and the admin page's banner say so
 * (docs/observability.md#the-endpoint-keeps-failing). Nothing is switched off: the schedule's retries go on, and the
 * endpoint's active flag is the platform's to set.
 */

/** Since when every attempt has failed: the start of the failing streak, or null when the last attempt delivered or there was none. */
export type FailingSince = Date | null;

/** Whether every attempt since `failingSince` failed for at least `afterMinutes` at `now`. */
export function isEndpointFailing(failingSince: FailingSince, now: Date, afterMinutes: number): boolean {
  return failingSince !== null && now.getTime() - failingSince.getTime() >= afterMinutes * 60_000;
}
