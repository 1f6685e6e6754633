import type { CpuMeter } from './processes';
import type { EventLoad, EventTiming, PhaseResult } from './platform-load';
import { summarize } from './stats';

/** One measured phase of a delivery benchmark: rate, latency, the answer to the offer, CPU per process. */
export interface PhaseReport {
  phase: string;
  offered: string;
  sent: number;
  delivered: number;
  failedCalls: number;
  ratePerS: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** How long the offer took to be answered (the platform call; the ceiling's workflow start). */
  apiP50: number;
  apiP95: number;
  /** Cores busy per process during the phase, and CPU milliseconds per delivered event. */
  cores: Record<string, number>;
  cpuMsPerEvent: Record<string, number>;
}

export type CpuUse = ReturnType<CpuMeter['used']>;

export function phaseReport(phase: string, offered: string, result: PhaseResult, cpu: CpuUse): PhaseReport {
  const latency = summarize(result.latenciesMs);
  const api = summarize(result.apiLatenciesMs);
  return {
    phase,
    offered,
    sent: result.sent,
    delivered: result.delivered,
    failedCalls: result.failedCalls,
    ratePerS: result.ratePerS,
    p50: latency.p50,
    p95: latency.p95,
    p99: latency.p99,
    max: latency.max,
    apiP50: api.p50,
    apiP95: api.p95,
    cores: Object.fromEntries(Object.entries(cpu).map(([name, use]) => [name, use.cores])),
    cpuMsPerEvent: Object.fromEntries(Object.entries(cpu).map(([name, use]) => [name, (use.seconds * 1000) / result.delivered])),
  };
}

/**
 * An open loop at `rate` per second, or a closed loop with `concurrency` events in flight, for `durationS`. The open
 * loop is measured after `leadInS` at the same rate (the steady state, not the load's restart after the warm-up's
 * pause); the closed loop from its first offer.
 */
export type Phase = { rate: number; durationS: number; leadInS?: number } | { concurrency: number; durationS: number };

export const phaseName = (phase: Phase) => ('rate' in phase ? `open loop ${phase.rate}/s` : `closed loop ×${phase.concurrency}`);

/**
 * Runs one phase and measures it with `finish`: waiting for its events to arrive (settle), or by the answers alone
 * (answered); the CPU is counted from the first measured offer until `finish` is done.
 */
export async function runPhase(
  phase: Phase,
  load: EventLoad,
  meter: () => CpuMeter,
  finish: (timings: EventTiming[]) => Promise<PhaseResult> | PhaseResult,
): Promise<{ report: PhaseReport; timings: EventTiming[] }> {
  let cpu = 'rate' in phase ? undefined : meter();
  const timings =
    'rate' in phase
      ? await load.openLoop(phase.rate, phase.durationS, { leadInS: phase.leadInS, measuring: () => (cpu = meter()) })
      : await load.closedLoop(phase.concurrency, phase.durationS);
  const result = await finish(timings);
  const offered = 'rate' in phase ? `${phase.rate}/s` : 'max';
  return { report: phaseReport(phaseName(phase), offered, result, cpu!.used()), timings };
}
