import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../src/db/knex';
import { createTemporalClient } from '../src/temporal/client';
import { startCeilingStack, type EnvelopeTemplate } from './support/ceiling-stack';
import { flags, list, runMain } from './support/cli';
import {
  deliveredEvents,
  readRelayTrace,
  relayPasses,
  type RelaySide,
  sample,
  type StageEvent,
  stageRows,
  workflowTimes,
  workflowIdsOf,
} from './support/delivery-trace';
import { LockWaitSampler } from './support/lock-waits';
import { machineInfo } from './support/machine';
import { type Phase, phaseName, type PhaseReport, runPhase } from './support/phase-report';
import { answered, EventLoad, platformCall, settle, untilArrived } from './support/platform-load';
import { CpuMeter } from './support/processes';
import { Receiver } from './support/receiver';
import { startStack } from './support/stack';
import { markdownTable, median } from './support/stats';
import { type NamedTuning, parseTunings } from './support/worker-tuning';

/**
 * Issue 15: this service against its ceiling, the trivial Temporal workflow per event (one local activity POSTing the
 * service's real envelope to the same subscriber), on the same dev server binary, with the same worker settings, the
 * same subscriber and the same offered load; run alternately, round after round, for each worker tuning given.
 * Prints service ÷ ceiling for rate, CPU per event and latency, the stages of each event, and the relay's passes.
 * Two more systems tell the service's extra cost apart: `ceiling-view`, the ceiling with what the delivery workflow
 * shows operators in Temporal UI (summary, details, search attributes and their upsert), and `platform`, platform
 * calls alone, their events left in the outbox. The service's CPU per event cannot fall below ceiling + platform.
 */
const options = flags({
  rounds: 3,
  /** Worker settings to compare (bench/support/worker-tuning.ts): `default;polls50:maxConcurrentWorkflowTaskPolls=50`. */
  tunings: 'default',
  /** `service`, `ceiling`, `ceiling-view` (both need a service run first: they send the envelope it rendered), `platform`. */
  systems: 'service,ceiling,ceiling-view,platform',
  rates: '50,200',
  duration: 20,
  warmup: 10,
  concurrency: 64,
  'max-duration': 30,
  'settle-timeout': 180,
  /** Events per phase whose stages are traced (Temporal histories read after the phase); 0: none. */
  'trace-sample': 300,
  /** Temporal dev server dynamic config, `key=json;key2=json`, for both systems. */
  'temporal-config': '',
  out: '',
});

const SYSTEMS = ['service', 'ceiling', 'ceiling-view', 'platform'] as const;
type System = (typeof SYSTEMS)[number];

/** Processes whose CPU counts for each system (the bench process, which offers the load, for none). */
const COUNTED: Record<System, string[]> = {
  service: ['api', 'relay', 'worker', 'delivery', 'postgres', 'temporal'],
  // The ceiling's worker process starts its workflows too (bench/ceiling/worker.ts).
  ceiling: ['worker', 'temporal'],
  'ceiling-view': ['worker', 'temporal'],
  platform: ['api', 'postgres'],
};

/** The counted processes that ran (the service has `delivery` or `relay` and `worker`, by its layout). */
const countedIn = (system: System, report: PhaseReport) => COUNTED[system].filter((name) => report.cpuMsPerEvent[name] !== undefined);

interface SystemRun {
  system: System;
  tuning: string;
  round: number;
  loadAverage: { before: number; after: number };
  phases: PhaseReport[];
  stages: Record<string, ReturnType<typeof stageRows>>;
  relay: Record<string, unknown>;
  lockWaits: Record<string, unknown>;
}

const phases: Phase[] = [
  ...list(options.rates).map((rate) => ({ rate: Number(rate), durationS: options.duration })),
  { concurrency: options.concurrency, durationS: options['max-duration'] },
];

const cpuTotal = (system: System, report: PhaseReport) => countedIn(system, report).reduce((sum, name) => sum + report.cpuMsPerEvent[name], 0);
const coresTotal = (system: System, report: PhaseReport) => countedIn(system, report).reduce((sum, name) => sum + report.cores[name], 0);

let template: EnvelopeTemplate | undefined;

/** The last envelope the service delivered, the model of the ceiling's bodies. */
async function captureTemplate(db: Db): Promise<EnvelopeTemplate> {
  const { payload } = await db('webhook_events').orderBy('id', 'desc').first('payload');
  const transactionId = (JSON.parse(payload) as { data: { donation: { payment: { transaction_id: string } } } }).data.donation.payment
    .transaction_id;
  return { payload, transactionId };
}

async function runService(receiver: Receiver, { name, tuning, relay, layout }: NamedTuning, round: number): Promise<SystemRun> {
  const relayTraceFile = path.join(os.tmpdir(), `bench-relay-trace-${randomUUID()}.jsonl`);
  const traced = layout === 'separate';
  const stack = await startStack({
    ...(traced
      ? { roles: ['api', 'relay', 'worker'], workerTuning: tuning, relayProbe: { traceFile: relayTraceFile, tuning: relay } }
      : { roles: ['api', 'delivery'] }),
    temporalDynamicConfig: list(options['temporal-config'].replaceAll(';', ',')),
  });
  try {
    await stack.configureEndpoint(receiver.url);
    const load = new EventLoad(platformCall(stack.apiUrl, stack.staffToken), receiver, `svc-${randomUUID().slice(0, 8)}`);
    const processes = new Map([...stack.processes(), ['bench', process.pid]]);
    if (options.warmup > 0) await settle(receiver, await load.openLoop(50, options.warmup), options['settle-timeout']);
    template ??= await captureTemplate(stack.db);
    const run: SystemRun = { system: 'service', tuning: name, round, loadAverage: { before: os.loadavg()[0], after: 0 }, phases: [], stages: {}, relay: {}, lockWaits: {} };
    for (const phase of phases) {
      process.stderr.write(`  service: ${phaseName(phase)}\n`);
      const locks = new LockWaitSampler(stack.db);
      const { report, timings } = await runPhase(phase, load, () => new CpuMeter(processes), untilArrived(receiver, options['settle-timeout']));
      run.lockWaits[report.phase] = await locks.stop();
      run.phases.push(report);
      const delivered = deliveredEvents(timings, receiver);
      // The combined role's relay is the production one, without the trace of its starts.
      const { byEvent, summary } = traced
        ? await relayPasses(stack.db, delivered.map(({ receipt }) => receipt.eventId), readRelayTrace(relayTraceFile))
        : { byEvent: new Map<number, RelaySide>(), summary: {} };
      run.relay[report.phase] = summary;
      if (options['trace-sample'] > 0) {
        const traced = sample(delivered, options['trace-sample']);
        const client = createTemporalClient({ address: stack.temporal!.address, namespace: 'default' });
        try {
          const workflowIds = await workflowIdsOf(stack.db, traced.map(({ receipt }) => receipt.eventId));
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
    }
    run.loadAverage.after = os.loadavg()[0];
    return run;
  } finally {
    await stack.stop();
    await rm(relayTraceFile, { force: true });
  }
}

async function runCeiling(receiver: Receiver, { name, tuning, layout }: NamedTuning, round: number, system: 'ceiling' | 'ceiling-view'): Promise<SystemRun> {
  if (!template) throw new Error('the ceiling sends the service envelope: run the service first (--systems=service,ceiling)');
  const envelope = template;
  const stack = await startCeilingStack({
    subscriberUrl: receiver.url,
    tuning,
    template: envelope,
    // Eager starts where the service's layout has them: its `delivery` role starts on the worker's connection.
    start: { described: system === 'ceiling-view', eager: layout === 'combined' },
    temporalDynamicConfig: list(options['temporal-config'].replaceAll(';', ',')),
  });
  try {
    const load = new EventLoad(stack.offer, receiver, `ceil-${randomUUID().slice(0, 8)}`);
    const processes = new Map<string, number>([
      ['worker', stack.worker.pid],
      ['temporal', stack.temporal.pid],
      ['bench', process.pid],
    ]);
    if (options.warmup > 0) await settle(receiver, await load.openLoop(50, options.warmup), options['settle-timeout']);
    const run: SystemRun = { system, tuning: name, round, loadAverage: { before: os.loadavg()[0], after: 0 }, phases: [], stages: {}, relay: {}, lockWaits: {} };
    for (const phase of phases) {
      process.stderr.write(`  ${system}: ${phaseName(phase)}\n`);
      const { report, timings } = await runPhase(phase, load, () => new CpuMeter(processes), untilArrived(receiver, options['settle-timeout']));
      run.phases.push(report);
      if (options['trace-sample'] > 0) {
        const traced = sample(deliveredEvents(timings, receiver), options['trace-sample']);
        const times = await workflowTimes(stack.client, traced.map(({ timing }) => timing.key));
        run.stages[report.phase] = stageRows(
          traced.map(({ timing, receipt }) => ({ timing, receivedMs: receipt.atMs, temporal: times.get(timing.key) })),
        );
      }
    }
    run.loadAverage.after = os.loadavg()[0];
    return run;
  } finally {
    await stack.stop();
  }
}

/**
 * The platform calls alone, in the same phases (a closed-loop caller makes its next call once the last is answered):
 * only the `api` role, no relay and no Temporal, the endpoint configured so that each call renders and stores its
 * event in the outbox. Its figures are per call; its latency is the call's answer.
 */
async function runPlatform(receiver: Receiver, { name }: NamedTuning, round: number): Promise<SystemRun> {
  const stack = await startStack({ roles: ['api'], withoutTemporal: true });
  try {
    await stack.configureEndpoint(receiver.url);
    const load = new EventLoad(platformCall(stack.apiUrl, stack.staffToken), receiver, `calls-${randomUUID().slice(0, 8)}`, false);
    const processes = new Map([...stack.processes(), ['bench', process.pid]]);
    if (options.warmup > 0) await load.openLoop(50, options.warmup);
    const run: SystemRun = { system: 'platform', tuning: name, round, loadAverage: { before: os.loadavg()[0], after: 0 }, phases: [], stages: {}, relay: {}, lockWaits: {} };
    for (const phase of phases) {
      process.stderr.write(`  platform: ${phaseName(phase)}, calls only\n`);
      run.phases.push((await runPhase(phase, load, () => new CpuMeter(processes), answered)).report);
    }
    run.loadAverage.after = os.loadavg()[0];
    return run;
  } finally {
    await stack.stop();
  }
}

const RUNNERS: Record<System, (receiver: Receiver, tuning: NamedTuning, round: number) => Promise<SystemRun>> = {
  service: runService,
  ceiling: (receiver, tuning, round) => runCeiling(receiver, tuning, round, 'ceiling'),
  'ceiling-view': (receiver, tuning, round) => runCeiling(receiver, tuning, round, 'ceiling-view'),
  platform: runPlatform,
};

/** The figures compared, per phase: rate, latency, CPU per event and cores busy over the system's processes. */
function metricsOf(run: SystemRun): Record<string, number> {
  const metrics: Record<string, number> = {};
  for (const report of run.phases) {
    metrics[`${report.phase}: delivered/s`] = report.ratePerS;
    metrics[`${report.phase}: p50 ms`] = report.p50;
    metrics[`${report.phase}: p95 ms`] = report.p95;
    metrics[`${report.phase}: CPU ms per event`] = cpuTotal(run.system, report);
    metrics[`${report.phase}: cores busy`] = coresTotal(run.system, report);
    for (const name of countedIn(run.system, report)) metrics[`${report.phase}: CPU ms per event, ${name}`] = report.cpuMsPerEvent[name];
  }
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

function report(runs: SystemRun[], tunings: NamedTuning[], machine: Record<string, string | number>): string {
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
    lines.push('', 'Platform calls alone: rates are answered calls per second, latencies the answers\' (not deliveries).', '');
    for (const system of SYSTEMS) {
      for (const phase of phases.map(phaseName)) {
        const rows = stageMedians(of(system), phase);
        if (rows.length > 0) lines.push(`Stages, ${system}, ${phase} (ms, medians of the runs' p50 / p95 / max):`, markdownTable(rows), '');
      }
    }
    for (const run of of('service')) {
      lines.push(`Relay passes and lock waits, service run ${run.round + 1}: ${JSON.stringify({ relay: run.relay, lockWaits: run.lockWaits })}`);
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

async function main() {
  const tunings = parseTunings(options.tunings);
  const systems = list(options.systems) as System[];
  const unknown = systems.filter((system) => !SYSTEMS.includes(system));
  if (unknown.length > 0) throw new Error(`--systems: unknown ${unknown.join(', ')} (known: ${SYSTEMS.join(', ')})`);
  if (systems.some((system) => system.startsWith('ceiling')) && systems.indexOf('service') !== 0) {
    throw new Error('--systems must begin with service when it has a ceiling: the ceiling sends the envelope the service rendered');
  }
  const receiver = new Receiver();
  await receiver.listen();
  const runs: SystemRun[] = [];
  const machine = await machineInfo();
  try {
    const order = tunings.flatMap((tuning) => systems.map((system) => ({ tuning, system })));
    for (let round = 0; round < options.rounds; round++) {
      // Alternately forwards and backwards, so that neither system nor tuning always runs first (the first service
      // run of all must stay first: it renders the envelope the ceiling sends).
      const turn = round % 2 === 1 ? [...order].reverse() : order;
      for (const { tuning, system } of turn) {
        process.stderr.write(`round ${round + 1}: ${system}, tuning ${tuning.name} (load ${os.loadavg()[0].toFixed(1)})\n`);
        const run = await RUNNERS[system](receiver, tuning, round);
        runs.push(run);
        if (options.out) writeFileSync(options.out, JSON.stringify({ machine, options, runs }, null, 2));
      }
    }
  } finally {
    await receiver.close();
  }
  process.stdout.write(`${report(runs, tunings, machine)}\n`);
}

runMain(main);
