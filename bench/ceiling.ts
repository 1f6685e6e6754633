import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createTemporalClient } from '../src/temporal/client';
import { type CeilingView, serviceVersioned } from './ceiling/starts';
import { type CeilingSystem, inTurn, parseSystems, report, startRun, type System, type SystemRun, VIEW_OF_CEILING } from './support/ceiling-report';
import { captureTemplate, type CeilingStack, startCeilingStack, type EnvelopeTemplate } from './support/ceiling-stack';
import { flags, keyValues, list, runMain } from '../stack/cli';
import { deliveredEvents, sample, stageRows, workflowTimes } from './support/delivery-trace';
import { machineInfo } from './support/machine';
import { type Phase, phaseName, runPhase } from './support/phase-report';
import { answered, EventLoad, type Offer, platformCall, settle, untilArrived } from './support/platform-load';
import { CpuMeter, untilCalm } from './support/processes';
import { Receiver } from './support/receiver';
import { type BenchRole, startStack } from './support/stack';
import { OtlpSink } from './support/otlp-sink';
import { highestSustainedRate, type SustainedRate } from './support/sustained-rate';
import { runServicePhase, type ServiceProbe } from './support/service-phase';
import { readStatements, resetStatements } from './support/statements';
import { type NamedTuning, parseTunings } from './support/worker-tuning';
import { pidOf } from '../stack/process';

/**
 * Issue 15: this service against its ceiling, the trivial Temporal workflow per event (one local activity POSTing the
 * service's real envelope to the same subscriber), on the same dev server binary, with the same worker settings, the
 * same subscriber and the same offered load; run alternately, round after round, for each worker tuning given.
 * Prints service ÷ ceiling for rate, CPU per event and latency, the stages of each event, and the relay's passes.
 * Two more systems tell the service's extra cost apart: `ceiling-view`, the ceiling with what the delivery workflow
 * shows operators in Temporal UI (summary, details, search attributes and their upsert), and `platform`, platform
 * calls alone, their events left in the outbox. The service's CPU per event cannot fall below ceiling + platform.
 * `floor` runs the platform calls and the ceiling-view at once, each event a call and then a start, on shared cores.
 */
const options = flags({
  rounds: 3,
  /** Worker settings to compare (bench/support/worker-tuning.ts): `default;polls50:maxConcurrentWorkflowTaskPolls=50`. */
  tunings: 'default',
  /**
   * `service`, `ceiling`, `ceiling-view`, `ceiling-view-lean`, `floor`, `floor-outbox` (these need a service run
   * first: they send the envelope it rendered, or start from it), `platform`.
   */
  systems: 'service,ceiling,ceiling-view,platform',
  rates: '50,200',
  duration: 20,
  warmup: 10,
  concurrency: 64,
  /**
   * Seconds each open-loop phase runs at its rate before it is measured: the load resumes after the warm-up's pause
   * with a burst of late latencies in every system alike (BENCHMARKS.md, 29 November), which is not the steady state.
   */
  'lead-in': 5,
  'max-duration': 30,
  'settle-timeout': 180,
  /** Events per phase whose stages are traced (Temporal histories read after the phase); 0: none. */
  'trace-sample': 300,
  /** Count the service's SQL statements per delivered event in each phase (pg_stat_statements). */
  'pg-stat-statements': false,
  /** Sample the service's Postgres sessions waiting for locks during each phase (its CPU then counts them too). */
  'lock-waits': false,
  /**
   * Comma-separated service roles (`delivery`, `api`) to run with --cpu-prof, and `ceiling` for the ceilings' process
   * (in every ceiling and floor run); the profiles go to this directory.
   */
  'cpu-prof': '',
  'cpu-prof-dir': '/tmp/donation-webhooks-bench-profiles',
  /**
   * `low,high[,probes]`: also find each system's highest sustained open-loop rate in that range by bisection, with
   * phases of --duration (bench/support/sustained-rate.ts); empty: not searched.
   */
  sustained: '',
  /** Keep the service's logs (and its stack's folder) of each round in this directory. */
  logs: '',
  /** Extra environment for the service's processes, `KEY=value;KEY2=value` (e.g. `TEMPORAL_WORKER_VERSIONING=false`). */
  env: '',
  /** Node options of the service's delivery process, e.g. `--max-old-space-size=256` as docker-compose.yml runs it. */
  'delivery-node-args': '',
  /** Temporal dev server dynamic config, `key=json;key2=json`, for both systems. */
  'temporal-config': '',
  out: '',
});

const phases: Phase[] = [
  ...list(options.rates).map((rate) => ({ rate: Number(rate), durationS: options.duration, leadInS: options['lead-in'] })),
  { concurrency: options.concurrency, durationS: options['max-duration'] },
];

let template: EnvelopeTemplate | undefined;

const profiled = list(options['cpu-prof']).filter((role) => role !== 'ceiling') as BenchRole[];
const ceilingProfiled = list(options['cpu-prof']).includes('ceiling');

async function runService(receiver: Receiver, { name, tuning, relay, layout, tracing }: NamedTuning, round: number): Promise<SystemRun> {
  const relayTraceFile = path.join(os.tmpdir(), `bench-relay-trace-${randomUUID()}.jsonl`);
  const traced = layout === 'separate';
  const spans = tracing === undefined ? undefined : new OtlpSink();
  await spans?.listen();
  const stack = await startStack({
    ...(traced
      ? { roles: ['api', 'relay', 'worker'], workerTuning: tuning, relayProbe: { traceFile: relayTraceFile, tuning: relay } }
      : { roles: ['api', 'delivery'] }),
    env: { ...keyValues(options.env), ...spans?.environment(tracing!) },
    nodeArgs: { delivery: options['delivery-node-args'].split(' ').filter(Boolean) },
    pgStatStatements: options['pg-stat-statements'],
    keepLogsIn: options.logs ? path.join(options.logs, `${name}-${round + 1}`) : undefined,
    cpuProfile: profiled.length > 0 ? { roles: profiled, dir: path.join(options['cpu-prof-dir'], `${name}-${round + 1}`) } : undefined,
    temporalDynamicConfig: list(options['temporal-config'].replaceAll(';', ',')),
  });
  try {
    await stack.configureEndpoint(receiver.url);
    const load = new EventLoad(platformCall(stack.apiUrl, stack.staffToken), receiver, `svc-${randomUUID().slice(0, 8)}`);
    const processes = new Map([...stack.processes(), ['bench', process.pid]]);
    if (options.warmup > 0) await settle(receiver, await load.openLoop(50, options.warmup), options['settle-timeout']);
    template ??= await captureTemplate(stack.db);
    const run = startRun('service', name, round);
    const probe: ServiceProbe = {
      db: stack.db,
      temporal: () => createTemporalClient({ address: stack.temporal!.address, namespace: 'default' }),
      traceSample: options['trace-sample'],
      statements: options['pg-stat-statements'],
      lockWaits: options['lock-waits'],
      // The combined role's relay is the production one, without the trace of its starts: its passes and the attempts'
      // starts are read from the rows alone.
      relayTraceFile: traced ? relayTraceFile : undefined,
      settleTimeoutS: options['settle-timeout'],
    };
    for (const phase of phases) {
      process.stderr.write(`  service: ${phaseName(phase)}\n`);
      await runServicePhase(phase, load, () => new CpuMeter(processes, undefined, ['delivery']), receiver, run, probe);
    }
    run.sustained = await searchSustainedRate(load, receiver, () => new CpuMeter(processes));
    run.loadAverage.after = os.loadavg()[0];
    // Without this, a tracing set-up that exports nothing would pass for tracing that costs nothing.
    if (spans && tracing! > 0 && spans.exports === 0) throw new Error(`tuning "${name}": tracing was on, but no span reached the sink`);
    return run;
  } finally {
    await stack.stop();
    await spans?.close();
    await rm(relayTraceFile, { force: true });
  }
}

async function runCeiling(receiver: Receiver, { name, tuning, layout }: NamedTuning, round: number, system: CeilingSystem): Promise<SystemRun> {
  const stack = await startCeiling(receiver, tuning, layout, VIEW_OF_CEILING[system], `${system}-${name}-${round + 1}`);
  try {
    const load = new EventLoad(stack.offer, receiver, `ceil-${randomUUID().slice(0, 8)}`);
    return await measureDeliveries(system, name, round, load, receiver, stack, new Map<string, number>());
  } finally {
    await stack.stop();
  }
}

/**
 * The floor as one system: the platform calls and the ceiling-view on the machine at once. Each event is a platform
 * call (its event left in the outbox, no relay) and, once answered, the view's workflow start, as the service's relay
 * starts a workflow after the commit. The floor summed from the two systems' separate runs leaves out that they share
 * the cores, which the service's processes do; this run counts it, and its latency is the call's plus the view's.
 *
 * `floor-outbox` adds what the service's guarantees add to it: the ceiling's process, in place of the delivery role,
 * claims the platform's events at each notification with the relay's statement, starts the view's workflow of each,
 * and makes its attempt with the attempt's two statements (bench/ceiling/starts.ts, activities.ts), on a worker
 * versioned where the service's is. What the service spends above this is its own code: the delivery workflow, the
 * relay's and the attempt's bookkeeping, logs, metrics, the sweep.
 */
async function runFloor(receiver: Receiver, { name, tuning, layout }: NamedTuning, round: number, system: 'floor' | 'floor-outbox'): Promise<SystemRun> {
  if (!template) throw new Error(`the ${system} sends the service envelope: run the service first (--systems=service,${system})`);
  const outbox = system === 'floor-outbox';
  const platform = await startStack({ roles: ['api'], withoutTemporal: true });
  try {
    await platform.configureEndpoint(receiver.url);
    const ceiling = await startCeiling(receiver, tuning, layout, 'described', `${system}-${name}-${round + 1}`, outbox ? platform.databaseUrl : undefined);
    try {
      const call = platformCall(platform.apiUrl, platform.staffToken);
      const offer: Offer = outbox ? call : async (key) => (await call(key)) && ceiling.offer(key);
      const load = new EventLoad(offer, receiver, `${system}-${randomUUID().slice(0, 8)}`);
      return await measureDeliveries(system, name, round, load, receiver, ceiling, platform.processes());
    } finally {
      await ceiling.stop();
    }
  } finally {
    await platform.stop();
  }
}

/**
 * `run` names the folder of the ceiling process's profile (--cpu-prof=ceiling); with `outboxDatabaseUrl`, the process
 * relays that database's outbox instead of starting at the bench's request.
 */
function startCeiling(
  receiver: Receiver,
  tuning: NamedTuning['tuning'],
  layout: NamedTuning['layout'],
  view: CeilingView,
  run: string,
  outboxDatabaseUrl?: string,
): Promise<CeilingStack> {
  if (!template) throw new Error('the ceiling sends the service envelope: run the service first (--systems=service,ceiling)');
  return startCeilingStack({
    cpuProfileDir: ceilingProfiled ? path.join(options['cpu-prof-dir'], run) : undefined,
    subscriberUrl: receiver.url,
    tuning,
    template,
    // Eager starts where the service's layout has them: its `delivery` role starts on the worker's connection. The
    // floor with the outbox is versioned where that role is: Worker Versioning is part of what the service must cost.
    start: { view, eager: layout === 'combined', outboxDatabaseUrl, versioned: outboxDatabaseUrl !== undefined && layout === 'combined' && serviceVersioned(keyValues(options.env)) },
    temporalDynamicConfig: list(options['temporal-config'].replaceAll(';', ',')),
  });
}

/** The phases of a system whose deliveries the ceiling's process makes; `others` are the processes beside it. */
async function measureDeliveries(
  system: System,
  name: string,
  round: number,
  load: EventLoad,
  receiver: Receiver,
  stack: CeilingStack,
  others: Map<string, number>,
): Promise<SystemRun> {
  const processes = new Map<string, number>([
    ...others,
    ['worker', pidOf(stack.worker)],
    ['temporal', pidOf(stack.temporal)],
    ['bench', process.pid],
  ]);
  if (options.warmup > 0) await settle(receiver, await load.openLoop(50, options.warmup), options['settle-timeout']);
  const run = startRun(system, name, round);
  for (const phase of phases) {
    process.stderr.write(`  ${system}: ${phaseName(phase)}\n`);
    const meter = () => new CpuMeter(processes, undefined, ['worker']);
    const { report, timings } = await runPhase(phase, load, meter, untilArrived(receiver, options['settle-timeout']));
    run.phases.push(report);
    if (options['trace-sample'] > 0) {
      const traced = sample(deliveredEvents(timings, receiver), options['trace-sample']);
      const times = await workflowTimes(stack.client, traced.map(({ timing }) => timing.key));
      run.stages[report.phase] = stageRows(
        traced.map(({ timing, receipt }) => ({ timing, receivedMs: receipt.atMs, temporal: times.get(timing.key) })),
      );
    }
  }
  run.sustained = await searchSustainedRate(load, receiver, () => new CpuMeter(processes));
  run.loadAverage.after = os.loadavg()[0];
  return run;
}

/**
 * Before each probe of --sustained: the system's processes below a fifth of a core in two windows of 2 s in a row, for
 * two minutes at most (in the runs of 29 November every system was calm within the first window after its probe).
 */
const SUSTAINED_PROBE_CALM = { cores: 0.2, windowS: 2, windows: 2, timeoutS: 120 };

/** --sustained: the highest open-loop rate this system keeps up with; undefined when not asked for. */
async function searchSustainedRate(load: EventLoad, receiver: Receiver, meter: () => CpuMeter): Promise<SustainedRate | undefined> {
  if (!options.sustained) return undefined;
  const [low, high, probes = 6] = list(options.sustained).map(Number);
  return highestSustainedRate(
    async (rate) => {
      process.stderr.write(`    sustained? open loop ${rate}/s\n`);
      return (await runPhase({ rate, durationS: options.duration, leadInS: options['lead-in'] }, load, meter, untilArrived(receiver, options['settle-timeout']))).report;
    },
    { low, high, probes },
    () => untilCalm(meter, SUSTAINED_PROBE_CALM),
  );
}

/**
 * The platform calls alone, in the same phases (a closed-loop caller makes its next call once the last is answered):
 * only the `api` role, no relay and no Temporal, the endpoint configured so that each call renders and stores its
 * event in the outbox. Its figures are per call; its latency is the call's answer.
 */
async function runPlatform(receiver: Receiver, { name }: NamedTuning, round: number): Promise<SystemRun> {
  const stack = await startStack({
    roles: ['api'],
    withoutTemporal: true,
    pgStatStatements: options['pg-stat-statements'],
    cpuProfile: profiled.includes('api') ? { roles: ['api'], dir: path.join(options['cpu-prof-dir'], `platform-${name}-${round + 1}`) } : undefined,
  });
  try {
    await stack.configureEndpoint(receiver.url);
    const load = new EventLoad(platformCall(stack.apiUrl, stack.staffToken), receiver, `calls-${randomUUID().slice(0, 8)}`, false);
    const processes = new Map([...stack.processes(), ['bench', process.pid]]);
    if (options.warmup > 0) await load.openLoop(50, options.warmup);
    const run = startRun('platform', name, round);
    for (const phase of phases) {
      process.stderr.write(`  platform: ${phaseName(phase)}, calls only\n`);
      if (options['pg-stat-statements']) await resetStatements(stack.db);
      const { report, timings } = await runPhase(phase, load, () => new CpuMeter(processes), answered);
      run.phases.push(report);
      if (options['pg-stat-statements']) run.statements[report.phase] = await readStatements(stack.db, { top: 25, events: timings.length });
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
  'ceiling-view-lean': (receiver, tuning, round) => runCeiling(receiver, tuning, round, 'ceiling-view-lean'),
  platform: runPlatform,
  floor: (receiver, tuning, round) => runFloor(receiver, tuning, round, 'floor'),
  'floor-outbox': (receiver, tuning, round) => runFloor(receiver, tuning, round, 'floor-outbox'),
};

async function main() {
  const tunings = parseTunings(options.tunings);
  const systems = parseSystems(options.systems);
  const receiver = new Receiver();
  await receiver.listen();
  const runs: SystemRun[] = [];
  const machine = await machineInfo();
  try {
    const order = tunings.flatMap((tuning) => systems.map((system) => ({ tuning, system })));
    for (let round = 0; round < options.rounds; round++) {
      // Alternately forwards and backwards, so that neither system nor tuning always runs first (the first service
      // run of all must stay first: it renders the envelope the ceiling sends).
      for (const { tuning, system } of inTurn(order, round)) {
        process.stderr.write(`round ${round + 1}: ${system}, tuning ${tuning.name} (load ${os.loadavg()[0].toFixed(1)})\n`);
        const run = await RUNNERS[system](receiver, tuning, round);
        runs.push(run);
        if (options.out) writeFileSync(options.out, JSON.stringify({ machine, options, runs }, null, 2));
      }
    }
  } finally {
    await receiver.close();
  }
  process.stdout.write(`${report(runs, tunings, machine, phases)}\n`);
}

runMain(main);
