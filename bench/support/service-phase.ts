import type { Client } from '@temporalio/client';
import type { Db } from '../../src/db/knex';
import type { SystemRun } from './ceiling-report';
import { deliveredEvents, readRelayTrace, relayPasses, type RelaySide, sample, type StageEvent, stageRows, workflowIdsOf, workflowTimes } from './delivery-trace';
import { LockWaitSampler } from './lock-waits';
import { type Phase, runPhase } from './phase-report';
import { type EventLoad, untilArrived } from './platform-load';
import type { CpuMeter } from './processes';
import type { Receiver } from './receiver';
import { readStatements, resetStatements } from './statements';

/** What the service's benchmarks learn of each phase besides rate, latency and CPU (bench/README.md, issue 29). */
export interface ServiceProbe {
  /** The application's database. */
  db: Db;
  /** A new client of the service's Temporal, for the sampled events' histories; its connection is closed after. */
  temporal: () => Client;
  /** Events a phase whose stages are read (0: none). */
  traceSample: number;
  /** Count statements with pg_stat_statements (loaded into the service's Postgres). */
  statements: boolean;
  /**
   * Sample the service's Postgres sessions waiting for a lock, ten times a second. Off unless asked for: the samples
   * cost that Postgres some 15 ms of CPU a second, which its CPU per event would count against the service alone.
   */
  lockWaits: boolean;
  /** The traced relay's starts (bench/support/traced-relay.ts), for the separate layout; absent: the rows alone. */
  relayTraceFile?: string;
  settleTimeoutS: number;
}

/**
 * One phase of the service: rate, latency and CPU, and with them its lock waits (if sampled), its statements per
 * delivered event, its relay's passes (from the rows, and the relay's trace where there is one) and the stages of a
 * sample of its events (the rows and the workflows' histories), each stored in `run` under the phase's name.
 */
export async function runServicePhase(phase: Phase, load: EventLoad, meter: () => CpuMeter, receiver: Receiver, run: SystemRun, probe: ServiceProbe): Promise<void> {
  const locks = probe.lockWaits ? new LockWaitSampler(probe.db) : undefined;
  if (probe.statements) await resetStatements(probe.db);
  const { report, timings } = await runPhase(phase, load, meter, untilArrived(receiver, probe.settleTimeoutS));
  if (locks) run.lockWaits[report.phase] = await locks.stop();
  run.phases.push(report);
  const delivered = deliveredEvents(timings, receiver);
  if (probe.statements) run.statements[report.phase] = await readStatements(probe.db, { top: 25, events: delivered.length });
  const { byEvent, summary } = await relayPasses(
    probe.db,
    delivered.map(({ receipt }) => receipt.eventId),
    probe.relayTraceFile ? readRelayTrace(probe.relayTraceFile) : new Map(),
  );
  run.relay[report.phase] = summary;
  if (probe.traceSample <= 0) return;
  const traced = sample(delivered, probe.traceSample);
  const client = probe.temporal();
  try {
    const workflowIds = await workflowIdsOf(probe.db, traced.map(({ receipt }) => receipt.eventId));
    const times = await workflowTimes(client, [...workflowIds.values()]);
    run.stages[report.phase] = stageRows(
      traced.map(({ timing, receipt }): StageEvent => ({
        timing,
        receivedMs: receipt.atMs,
        temporal: times.get(workflowIds.get(receipt.eventId)!),
        relay: byEvent.get(receipt.eventId) as RelaySide | undefined,
      })),
    );
  } finally {
    await client.connection.close();
  }
}
