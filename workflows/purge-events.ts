import { continueAsNew, defineQuery, proxyActivities, setCurrentDetails, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  addPurgeTotals,
  NO_PURGE_TOTALS,
  purgeDetails,
  type PurgeTotals,
  RETENTION_BATCH_SIZE,
  type RetentionCutoffs,
  type RetentionPolicy,
  retentionCutoffs,
} from '../src/delivery-rules/retention';
import type { RetentionActivities } from '../src/delivery-rules/activity-contracts';

const { deleteEndedEventsBatch, dropEndedPayloadsBatch } = proxyActivities<RetentionActivities>({
  // One batch: a transaction over a few hundred rows and as many describe calls to Temporal.
  startToCloseTimeout: '5 minutes',
  // No limit: a database or Temporal outage only delays the purge, and each batch finds what is still due.
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

export interface PurgeEndedEventsInput extends RetentionPolicy {
  /** Where a purge stands that continued as new (long purges keep their history short). */
  resume?: { cutoffs: RetentionCutoffs; phase: 'events' | 'payloads'; totals: PurgeTotals; passedOver: number[] };
}

/** What the purge has done so far (tab Queries in Temporal UI). */
export const purgeProgressQuery = defineQuery<PurgeTotals>('purgeProgress');

/**
 * The nightly retention purge (started by the Temporal Schedule `webhook-retention`): deletes, in batches, the ended
 * events (delivered, max retries reached) created more than `eventRetentionDays` ago with their attempts, then drops
 * the payloads of those created more than `payloadRetentionDays` ago. Never an event that is waiting or failed, nor
 * one whose workflow runs (a resend): those are passed over until the next night.
 */
export async function purgeEndedEvents(input: PurgeEndedEventsInput): Promise<PurgeTotals> {
  const { eventRetentionDays, payloadRetentionDays } = input;
  // Workflow time: when the schedule fired, the same on every replay.
  const cutoffs = input.resume?.cutoffs ?? retentionCutoffs(Date.now(), input);
  let { phase, totals, passedOver } = input.resume ?? { phase: 'events' as const, totals: NO_PURGE_TOTALS, passedOver: [] };
  setHandler(purgeProgressQuery, () => totals);
  for (;;) {
    setCurrentDetails(purgeDetails(totals, phase));
    const deleting = phase === 'events';
    const request = {
      createdBefore: deleting ? cutoffs.eventsCreatedBefore : cutoffs.payloadsCreatedBefore,
      limit: RETENTION_BATCH_SIZE,
      passedOver,
    };
    const batch = deleting ? await deleteEndedEventsBatch(request) : await dropEndedPayloadsBatch(request);
    totals = addPurgeTotals(
      totals,
      deleting
        ? { deletedEvents: batch.events, deletedAttempts: batch.attempts, passedOver: batch.passedOver.length }
        : { droppedPayloads: batch.events, passedOver: batch.passedOver.length },
    );
    // An event passed over stays so for the rest of the purge (its payload too), and is counted once.
    passedOver = [...passedOver, ...batch.passedOver];
    if (batch.done) {
      // With both limits equal, everything whose payload is due was deleted with its event.
      if (!deleting || payloadRetentionDays >= eventRetentionDays) break;
      phase = 'payloads';
    }
    if (workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof purgeEndedEvents>({ eventRetentionDays, payloadRetentionDays, resume: { cutoffs, phase, totals, passedOver } });
    }
  }
  setCurrentDetails(purgeDetails(totals, 'done'));
  return totals;
}
