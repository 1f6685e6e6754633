/**
 * Bulk recovery: resending every event that failed or reached max retries in a time range, after an outage of the
 * subscriber. What the recovery workflow does, what it reports and how Temporal UI describes it. Pure, so that the
 * workflow can import it.
 */

import { swissClock } from './swiss-clock';

/**
 * Events resent at once. Each slot waits until its event's attempt is recorded, so that a subscriber just back from
 * an outage gets at most this many requests from the recovery at a time.
 */
export const RECOVERY_CONCURRENCY = 10;

/** Ids read per page; the next page is read once this one is done. */
export const RECOVERY_PAGE_SIZE = 100;

/** How long a slot waits for its event's attempt to be recorded before it counts it as unconfirmed and moves on. */
export const RECOVERY_ANSWER_TIMEOUT_MS = 2 * 60_000;

/** A recovery's workflow, named after the request's idempotency key: the same key never starts a second one. */
export const recoveryWorkflowId = (idempotencyKey: string) => `webhook-recovery-${idempotencyKey}`;

/** What to recover: created in [createdFrom, createdTo), of these types (none: every type). Times as ISO text. */
export interface RecoveryParameters {
  createdFrom: string;
  createdTo: string;
  eventTypes: string[];
}

/** How the resend of one event ended. */
export type RecoveryOutcome = 'delivered' | 'failed' | 'skipped' | 'unconfirmed';

export interface RecoveryProgress {
  /** Events to resend when the recovery started. */
  total: number;
  /** Resent and delivered by that attempt. */
  delivered: number;
  /** Resent and failed again. */
  failed: number;
  /** No longer to resend when their turn came (delivered meanwhile, or gone). */
  skipped: number;
  /** Resent, but no attempt was recorded within RECOVERY_ANSWER_TIMEOUT_MS (the attempt may still come). */
  unconfirmed: number;
}

export const processedCount = ({ delivered, failed, skipped, unconfirmed }: RecoveryProgress) => delivered + failed + skipped + unconfirmed;

export const withOutcome = (progress: RecoveryProgress, outcome: RecoveryOutcome): RecoveryProgress => ({
  ...progress,
  [outcome]: progress[outcome] + 1,
});

/** What the query `recoveryProgress` answers (and the admin page shows). */
export interface RecoveryState extends RecoveryProgress {
  done: boolean;
}

/** `15.07.2025, 08:00`, Swiss local time. */
function swissMinute(ms: number): string {
  const { day, year, time } = swissClock(ms);
  return `${day}${year}, ${time}`;
}

const range = ({ createdFrom, createdTo }: RecoveryParameters) =>
  `${swissMinute(Date.parse(createdFrom))} – ${swissMinute(Date.parse(createdTo))} (Zurich)`;

const types = ({ eventTypes }: RecoveryParameters) => (eventTypes.length === 0 ? 'all types' : eventTypes.join(', '));

/** The workflow's summary: `Recovery: resend failed events created 15.07.2025, 08:00 – 15.07.2025, 12:00 (Zurich), all types`. */
export function recoverySummary(parameters: RecoveryParameters): string {
  return `Recovery: resend failed events created ${range(parameters)}, ${types(parameters)}`;
}

/** The workflow's details (Markdown in Temporal UI). */
export function recoveryDetails(parameters: RecoveryParameters, requestedBy: string): string {
  return [
    `**Resends:** events failed or at max retries reached, created ${range(parameters)}`,
    `**Event types:** ${types(parameters)}`,
    `**Requested by:** ${requestedBy}`,
    `**At once:** ${RECOVERY_CONCURRENCY} events, each until its attempt is recorded`,
  ].join('\n');
}

/** Current details, in the admin page's words: `Läuft — 40 von 120 bearbeitet: 35 zugestellt, …`. */
export function recoveryProgressDetails(state: RecoveryState): string {
  return (
    `${state.done ? 'Fertig' : 'Läuft'} — ${processedCount(state)} von ${state.total} bearbeitet: ${state.delivered} zugestellt, ` +
    `${state.failed} erneut fehlgeschlagen, ${state.skipped} übersprungen, ${state.unconfirmed} ohne Antwort`
  );
}
