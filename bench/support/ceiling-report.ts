import os from 'node:os';
import { list } from '../../stack/cli';
import type { CeilingView } from '../ceiling/starts';
import type { stageRows } from './delivery-trace';
import { type Phase, phaseName, type PhaseReport } from './phase-report';
import { markdownTable, median } from './stats';
import { type StatementCount, statementRow } from './statements';
import { SUSTAINED_P95_MS, type SustainedRate } from './sustained-rate';
import type { NamedTuning } from './worker-tuning';

/**
 * The systems bench/ceiling.ts and bench/stack-ceiling.ts compare (the service, its ceiling of one trivial workflow
 * per event, the ceiling with the operators' view, the platform calls alone), their runs, and the report of medians
 * and ratios both print. `ceiling-view-lean` is the view without its upsert after a delivering first attempt;
 * `floor` is the view and the platform calls run at once; `floor-outbox` the same with what the service's guarantees
 * add: the view's process relays the platform's outbox and records each attempt with the service's statements.
 */

export const SYSTEMS = ['service', 'ceiling', 'ceiling-view', 'ceiling-view-lean', 'platform', 'floor', 'floor-outbox'] as const;
export type System = (typeof SYSTEMS)[number];
export type CeilingSystem = Extract<System, `ceiling${string}`>;

/** What each ceiling shows operators (bench/ceiling/starts.ts). */
export const VIEW_OF_CEILING: Record<CeilingSystem, CeilingView> = { ceiling: 'bare', 'ceiling-view': 'described', 'ceiling-view-lean': 'lean' };

/** `--systems`: known ones only, the service first when a ceiling runs (the ceilings send the envelope it rendered). */
export function parseSystems(text: string): System[] {
  const systems = list(text) as System[];
  const unknown = systems.filter((system) => !SYSTEMS.includes(system));
  if (unknown.length > 0) throw new Error(`--systems: unknown ${unknown.join(', ')} (known: ${SYSTEMS.join(', ')})`);
  if (systems.some((system) => system.startsWith('ceiling') || system.startsWith('floor')) && systems.indexOf('service') !== 0) {
    throw new Error('--systems must begin with service when it has a ceiling or the floor: they send the envelope the service rendered');
  }
  return systems;
}

export interface SystemRun {
  system: System;
  tuning: string;
  round: number;
  loadAverage: { before: number; after: number };
  phases: PhaseReport[];
  stages: Record<string, ReturnType<typeof stageRows>>;
  relay: Record<string, unknown>;
  lockWaits: Record<string, unknown>;
  /** The service's statements per phase, with calls per delivered event (bench/ceiling.ts --pg-stat-statements). */
  statements: Record<string, StatementCount[]>;
  /** bench/ceiling.ts --sustained. */
  sustained?: SustainedRate;
}

export const startRun = (system: System, tuning: string, round: number): SystemRun => ({
  system,
  tuning,
  round,
  loadAverage: { before: os.loadavg()[0], after: 0 },
  phases: [],
  stages: {},
  relay: {},
  lockWaits: {},
  statements: {},
});

/**
 * The processes whose CPU counts for a system: every one measured but the bench's own (which offers the load), and
 * not a part given beside its whole (`postgres[temporal]`, the backends of Temporal's connections, is in `postgres`).
 */
const isPart = (name: string) => name.includes('[');
const countedIn = (report: PhaseReport) => Object.keys(report.cpuMsPerEvent).filter((name) => name !== 'bench' && !isPart(name));
const shownIn = (report: PhaseReport) => Object.keys(report.cpuMsPerEvent).filter((name) => name !== 'bench');

const cpuTotal = (report: PhaseReport) => countedIn(report).reduce((sum, name) => sum + report.cpuMsPerEvent[name], 0);
export const coresTotal = (report: PhaseReport) => countedIn(report).reduce((sum, name) => sum + report.cores[name], 0);

/** Round `round` of `order`: forwards, then backwards, and so on, so that nothing always runs first. */
export const inTurn = <T>(order: T[], round: number): T[] => (round % 2 === 1 ? [...order].reverse() : order);

/** The figures compared, per phase: rate, latency, CPU per event and cores busy over the system's processes. */
function metricsOf(run: SystemRun): Record<string, number> {
  const metrics: Record<string, number> = {};
  for (const report of run.phases) {
    metrics[`${report.phase}: delivered/s`] = report.ratePerS;
    metrics[`${report.phase}: p50 ms`] = report.p50;
    metrics[`${report.phase}: p95 ms`] = report.p95;
    metrics[`${report.phase}: CPU ms per event`] = cpuTotal(report);
    metrics[`${report.phase}: cores busy`] = coresTotal(report);
    for (const name of shownIn(report)) metrics[`${report.phase}: CPU ms per event, ${name}`] = report.cpuMsPerEvent[name];
    // Near 1.0: that thread is the serial stage (CpuMeter's busiestThreadOf).
    for (const name of shownIn(report).filter((part) => part.endsWith('[busiest thread]'))) metrics[`${report.phase}: cores busy, ${name}`] = report.cores[name];
  }
  if (run.sustained) metrics[`highest sustained open-loop rate (p95 < ${SUSTAINED_P95_MS} ms), events/s`] = run.sustained.rate;
  return metrics;
}

function medians(runs: SystemRun[]): Record<string, number> {
  const all = runs.map(metricsOf);
  return Object.fromEntries(Object.keys(all[0] ?? {}).map((key) => [key, median(all.map((metrics) => metrics[key]))]));
}

/** Median over the rounds of each stage's p50 and p95. */
function stageMedians(runs: SystemRun[], phase: string) {
  const tables = runs.map((run) => run.stages[phase]).filter(Boolean);
  if (tables.length === 0) return [];
  return tables[0].map(({ stage }) => {
    const rows = tables.map((table) => table.find((row) => row.stage === stage)).filter((row) => row !== undefined);
    return { stage, p50: median(rows.map((row) => row.p50)), p95: median(rows.map((row) => row.p95)), max: median(rows.map((row) => row.max)) };
  });
}

export function report(runs: SystemRun[], tunings: NamedTuning[], machine: Record<string, string | number>, phases: Phase[]): string {
  const lines = [`Machine: ${JSON.stringify(machine)}`, ''];
  const loads = runs.map((run) => `${run.system}/${run.tuning}#${run.round + 1}: ${run.loadAverage.before.toFixed(1)}→${run.loadAverage.after.toFixed(1)}`);
  lines.push(`Load average (1 min) before→after each run: ${loads.join(', ')}`, '');
  for (const { name } of tunings) {
    const of = (system: System) => runs.filter((run) => run.tuning === name && run.system === system);
    const bySystem = Object.fromEntries(SYSTEMS.map((system) => [system, medians(of(system))])) as Record<System, Record<string, number>>;
    const present = SYSTEMS.filter((system) => of(system).length > 0);
    const { service, ceiling, platform } = bySystem;
    const keys = [...new Set(present.flatMap((system) => Object.keys(bySystem[system])))];
    const ratio = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined ? (a / b).toFixed(2) : '');
    lines.push(
      `### Tuning "${name}": ${JSON.stringify(tunings.find((t) => t.name === name))}; medians of ${present.map((system) => `${of(system).length} ${system}`).join(', ')} runs`,
      '',
      markdownTable(
        keys.map((key) => ({
          metric: key,
          ...Object.fromEntries(present.map((system) => [system, bySystem[system][key] ?? ''])),
          'service ÷ ceiling': ratio(service[key], ceiling[key]),
        })),
      ),
      '',
    );
    // At a given offered rate every system delivers the same events per second, so their CPU per event adds up; in
    // the closed loop each runs at its own maximum, where the platform's calls are cheapest (an optimistic floor).
    for (const phase of phases.map(phaseName)) {
      const cpu = `${phase}: CPU ms per event`;
      const [bare, view, calls, measured] = [ceiling[cpu], bySystem['ceiling-view'][cpu], platform[cpu], service[cpu]];
      if (bare === undefined || calls === undefined) continue;
      lines.push(
        `Floor of service ÷ ceiling, CPU per event, ${phase}: (ceiling ${bare.toFixed(1)} + platform calls ${calls.toFixed(1)} ms) ÷ ceiling = ${ratio(bare + calls, bare)}` +
          (view === undefined ? '' : `; with the operators' view (ceiling-view ${view.toFixed(1)} + platform calls) ÷ ceiling = ${ratio(view + calls, bare)}`) +
          (measured === undefined ? '' : `; measured: ${ratio(measured, bare)}`),
      );
    }
    // A system's p50 / p95 in one phase, from its medians.
    const latency = (system: System, phase: string) => `${bySystem[system][`${phase}: p50 ms`]?.toFixed(0)} / ${bySystem[system][`${phase}: p95 ms`]?.toFixed(0)}`;
    // The floor run as one system shares the cores as the service does; set beside the floor summed from separate runs.
    for (const phase of phases.map(phaseName)) {
      const cpu = `${phase}: CPU ms per event`;
      const [together, view, calls, measured] = [bySystem.floor[cpu], bySystem['ceiling-view'][cpu], platform[cpu], service[cpu]];
      if (together === undefined) continue;
      const summed = view !== undefined && calls !== undefined ? `; summed from separate runs (ceiling-view + platform calls) ${(view + calls).toFixed(1)} ms` : '';
      lines.push(
        `Floor run together, ${phase}: CPU per event ${together.toFixed(1)} ms${summed}` +
          (measured === undefined ? '' : `; service ÷ floor run together = ${ratio(measured, together)}, p50 / p95 ms service ${latency('service', phase)}, floor ${latency('floor', phase)}`),
      );
    }
    // The floor with the outbox's statements and the attempt log: what the service spends above it is its own code.
    for (const phase of phases.map(phaseName)) {
      const cpu = `${phase}: CPU ms per event`;
      const [outbox, measured] = [bySystem['floor-outbox'][cpu], service[cpu]];
      if (outbox === undefined) continue;
      lines.push(
        `Floor with the outbox and the attempt log, ${phase}: CPU per event ${outbox.toFixed(1)} ms` +
          (measured === undefined ? '' : `; service ÷ floor with the outbox = ${ratio(measured, outbox)}, p50 / p95 ms service ${latency('service', phase)}, floor with the outbox ${latency('floor-outbox', phase)}`),
      );
    }
    lines.push('', 'Platform calls alone: rates are answered calls per second, latencies the answers\' (not deliveries).', '');
    for (const system of SYSTEMS) {
      for (const phase of phases.map(phaseName)) {
        const rows = stageMedians(of(system), phase);
        if (rows.length > 0) lines.push(`Stages, ${system}, ${phase} (ms, medians of the runs' p50 / p95 / max):`, markdownTable(rows), '');
      }
    }
    for (const run of of('service')) {
      if (Object.keys(run.relay).length + Object.keys(run.lockWaits).length === 0) continue;
      lines.push(`Relay passes and lock waits, service run ${run.round + 1}: ${JSON.stringify({ relay: run.relay, lockWaits: run.lockWaits })}`);
    }
    for (const run of [...of('service'), ...of('platform')]) {
      const per = run.system === 'platform' ? 'call' : 'delivered event';
      for (const [phase, statements] of Object.entries(run.statements)) {
        lines.push('', `Statements per ${per}, ${run.system} run ${run.round + 1}, ${phase} (pg_stat_statements):`, '', markdownTable(statements.map(statementRow)));
      }
    }
    lines.push('');
  }
  if (tunings.length > 1) {
    for (const system of SYSTEMS) {
      const bySetting = tunings.map(({ name }) => [name, medians(runs.filter((run) => run.tuning === name && run.system === system))] as const);
      const keys = Object.keys(bySetting[0][1]).filter((key) => !key.includes('CPU ms per event,'));
      if (keys.length === 0) continue;
      lines.push(`### ${system}: tunings side by side (medians)`, '', markdownTable(keys.map((key) => ({ metric: key, ...Object.fromEntries(bySetting.map(([name, metrics]) => [name, metrics[key]])) }))), '');
    }
  }
  return lines.join('\n');
}
