import type { Client } from '@temporalio/client';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import type { DeliveryIdentityMetrics } from '../observability/metrics';
import { createWakeUp } from '../shared/wake-up';
import type { EventDelivery } from '../webhook-events/event-deliveries';
import { claimOverdueEvents } from '../webhook-events/sweep-claims';
import { DeliveryWorkflowConflict, ownDelivery } from './delivery-identity';
import { type DeliveryQueue, deliveryQueueOf, startResumedDelivery } from './delivery-workflows';
import { reportWorkflowConflict } from './workflow-conflicts';

export interface SweepPassOptions {
  db: Db;
  client: Client;
  taskQueue: string;
  log: Logger;
  metrics?: DeliveryIdentityMetrics;
  /** How far past due an event must be before Temporal is asked about it, and how often it is asked again. */
  marginMs?: number;
  batchSize?: number;
  /** Deadline of a pass's Temporal calls: a frontend that never answers must not hold the sweep. */
  timeoutMs?: number;
}

export interface SweepOptions extends SweepPassOptions {
  /** Pause between passes; the first pass comes one pause after the start. */
  intervalMs?: number;
}

export const SWEEP_DEFAULTS = { intervalMs: 60_000, marginMs: 2 * 60_000, batchSize: 100, timeoutMs: 10_000 };

/** What one pass did: events claimed and asked about, deliveries started again, conflicts found. */
export interface SweepResult {
  checked: number;
  healed: number;
  conflicts: number;
}

/**
 * Heals one event if its delivery is lost: Temporal is asked (describe, by the event's stored workflow id) and only
 * when no run of the event's own is running (none at all, or one that ended while Postgres still says waiting or
 * failed) is the delivery started again where Postgres says it stands (resumeDelivery).
 */
async function healIfLost(client: Client, queue: DeliveryQueue, event: EventDelivery): Promise<'healed' | 'running'> {
  const existing = await ownDelivery(client, event.identity);
  if (existing.kind === 'own' && existing.running) return 'running';
  return (await startResumedDelivery(client, queue, event)) === 'started' ? 'healed' : 'running';
}

/**
 * One pass of the healing sweep: claims up to `batchSize` events that are overdue by `marginMs` (src/webhook-events/
 * sweep-claims.ts, claimOverdueEvents) and heals each whose workflow Temporal does not run. A conflict is reported like
 * the relay's; the first other error (Temporal down) is rethrown once the pass is over, and its events are asked about
 * again one margin later.
 */
export async function healLostDeliveries({
  db,
  client,
  taskQueue,
  log,
  metrics,
  marginMs = SWEEP_DEFAULTS.marginMs,
  batchSize = SWEEP_DEFAULTS.batchSize,
  timeoutMs = SWEEP_DEFAULTS.timeoutMs,
}: SweepPassOptions): Promise<SweepResult> {
  const queue = await deliveryQueueOf(db, taskQueue);
  const events = await claimOverdueEvents(db, { marginMs, limit: batchSize });
  const deadline = Date.now() + timeoutMs;
  const outcomes = await Promise.allSettled(events.map((event) => client.connection.withDeadline(deadline, () => healIfLost(client, queue, event))));
  const result: SweepResult = { checked: events.length, healed: 0, conflicts: 0 };
  let failure: unknown;
  for (const [index, outcome] of outcomes.entries()) {
    const event = events[index];
    const fields = { eventId: event.identity.eventId, workflowId: event.identity.workflowId, status: event.status, attempts: event.attempts };
    if (outcome.status === 'fulfilled') {
      if (outcome.value === 'running') continue;
      result.healed += 1;
      metrics?.deliveryHealed(event.status === 'failed' ? 'failed' : 'waiting');
      log.warn(fields, 'delivery healed: Temporal ran no workflow for this overdue event; resumed from what Postgres recorded');
    } else if (outcome.reason instanceof DeliveryWorkflowConflict) {
      result.conflicts += 1;
      await reportWorkflowConflict({ db, log, metrics }, outcome.reason, 'sweep');
    } else {
      failure ??= outcome.reason;
      log.debug({ ...fields, err: outcome.reason }, 'healing sweep could not ask Temporal about an event; it asks again later');
    }
  }
  if (failure) throw failure;
  return result;
}

/** Runs the healing sweep until `stop()`: a pass every `intervalMs`, another at once while passes come back full. */
export function startDeliverySweep(options: SweepOptions): { stop(): Promise<void> } {
  const { log, intervalMs = SWEEP_DEFAULTS.intervalMs, batchSize = SWEEP_DEFAULTS.batchSize } = options;
  const wakeUp = createWakeUp();
  let stopped = false;
  const loop = (async () => {
    for (let full = false; !stopped; ) {
      if (!full) await wakeUp.wait(intervalMs, { early: false });
      if (stopped) break;
      try {
        const result = await healLostDeliveries({ ...options, batchSize });
        if (result.checked > 0) log.info(result, 'healing sweep asked Temporal about overdue events');
        full = result.checked === batchSize;
      } catch (err) {
        full = false;
        log.warn({ err }, 'healing sweep pass failed; the next pass tries again');
      }
    }
  })();
  return {
    async stop() {
      stopped = true;
      wakeUp.stop();
      await loop;
    },
  };
}
