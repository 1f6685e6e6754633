/**
 * Retention of ended deliveries in Postgres: what the nightly purge workflow deletes and when, and what Temporal UI
 * shows of it. Pure, so that the workflow can import it.
 */

const DAY_MS = 24 * 60 * 60 * 1000;

/** Events (and payloads) per batch: one transaction each, short enough not to hold up the relay or deliveries. */
export const RETENTION_BATCH_SIZE = 500;

/** The schedule's id in the namespace (Temporal UI → Schedules), one per deployment. */
export const RETENTION_SCHEDULE_ID = 'webhook-retention';

/** Every night at 03:15 Swiss time, when the platform is quietest. */
export const RETENTION_SCHEDULE_TIME = { hour: 3, minute: 15, timezone: 'Europe/Zurich' } as const;

export interface RetentionPolicy {
  /** Days an ended event is kept with its attempts. */
  eventRetentionDays: number;
  /** Days its payload and response bodies are kept (at most eventRetentionDays). */
  payloadRetentionDays: number;
}

export interface RetentionCutoffs {
  /** Ended events created before this (ISO) are deleted. */
  eventsCreatedBefore: string;
  /** Ended events created before this (ISO) lose their payload. */
  payloadsCreatedBefore: string;
}

/** The cutoffs of a purge that runs at `nowMs`. */
export function retentionCutoffs(nowMs: number, policy: RetentionPolicy): RetentionCutoffs {
  return {
    eventsCreatedBefore: new Date(nowMs - policy.eventRetentionDays * DAY_MS).toISOString(),
    payloadsCreatedBefore: new Date(nowMs - policy.payloadRetentionDays * DAY_MS).toISOString(),
  };
}

/** What one purge did. */
export interface PurgeTotals {
  deletedEvents: number;
  deletedAttempts: number;
  droppedPayloads: number;
  /** Due events at max retries reached whose workflow was running (a resend): left for the next night. */
  passedOver: number;
}

export const NO_PURGE_TOTALS: PurgeTotals = { deletedEvents: 0, deletedAttempts: 0, droppedPayloads: 0, passedOver: 0 };

export function addPurgeTotals(a: PurgeTotals, b: Partial<PurgeTotals>): PurgeTotals {
  return {
    deletedEvents: a.deletedEvents + (b.deletedEvents ?? 0),
    deletedAttempts: a.deletedAttempts + (b.deletedAttempts ?? 0),
    droppedPayloads: a.droppedPayloads + (b.droppedPayloads ?? 0),
    passedOver: a.passedOver + (b.passedOver ?? 0),
  };
}

/** The schedule's and each run's summary in Temporal UI. */
export function retentionSummary(policy: RetentionPolicy): string {
  const payloads =
    policy.payloadRetentionDays < policy.eventRetentionDays ? `, payloads after ${policy.payloadRetentionDays} days` : '';
  return `Retention: delete ended webhook events after ${policy.eventRetentionDays} days${payloads}`;
}

/** The details (Markdown in Temporal UI): what is deleted, and what never is. */
export function retentionDetails(policy: RetentionPolicy): string {
  return [
    `**Deletes:** events delivered or at max retries reached, created more than ${policy.eventRetentionDays} days ago, with their attempts`,
    `**Drops payloads and response bodies:** of such events created more than ${policy.payloadRetentionDays} days ago`,
    '**Never touches:** events waiting or failed (a retry is scheduled), events whose workflow is running (a resend)',
    `**Batches:** ${RETENTION_BATCH_SIZE} events per transaction`,
  ].join('\n');
}

export type PurgePhase = 'events' | 'payloads' | 'done';

/** Current details while it runs, in the admin page's words. */
export function purgeDetails(totals: PurgeTotals, phase: PurgePhase): string {
  const state = phase === 'done' ? 'Fertig' : phase === 'events' ? 'Ereignisse werden gelöscht' : 'Payloads werden entfernt';
  return (
    `${state} — ${totals.deletedEvents} Ereignisse mit ${totals.deletedAttempts} Versuchen gelöscht, ` +
    `${totals.droppedPayloads} Payloads entfernt, ${totals.passedOver} übergangen (Workflow läuft)`
  );
}
