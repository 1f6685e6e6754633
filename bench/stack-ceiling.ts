import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTemporalClient } from '../src/temporal/client';
import { temporalClientOptions, temporalTlsSettings } from '../stack/stack';
import { type CeilingSystem, inTurn, parseSystems, report, startRun, type System, type SystemRun, VIEW_OF_CEILING } from './support/ceiling-report';
import { serviceVersioned, type StartOptions } from './ceiling/starts';
import { captureTemplate, startCeilingWorker, type EnvelopeTemplate } from './support/ceiling-stack';
import { flags, keyValues, list, runMain } from '../stack/cli';
import { machineInfo } from './support/machine';
import { type Phase, phaseName, runPhase } from './support/phase-report';
import { answered, EventLoad, type Offer, platformCall, settle, untilArrived } from './support/platform-load';
import { CpuMeter } from './support/processes';
import { type RealStack, REAL_STACK_TEMPORAL, realStackFlags, startRealStack } from './support/real-stack';
import { Receiver } from './support/receiver';
import type { NamedTuning } from './support/worker-tuning';
import { launcher } from '../stack/launcher';
import { pidOf } from '../stack/process';
import type { ProcessSpec } from '../stack/process-spec';
import { runServicePhase, type ServiceProbe } from './support/service-phase';

/**
 * bench/ceiling.ts on the production-like stack instead of the dev server (issue 21): the service as `npm run stack`
 * runs it (two API and two delivery replicas behind Caddy, Temporal as four services on a durable Postgres, mTLS),
 * against its ceiling of one trivial workflow per event (and the ceiling told what the operators see) on the same
 * Temporal server, and the platform calls alone; each run on a fresh stack, rounds alternating. CPU per event for
 * every process, each Temporal service and Postgres (split by database: the application's, Temporal's and its
 * visibility's backends).
 *
 *   node dist/bench/stack-ceiling.js --rounds=3 --rates=20 --duration=20 --max-duration=30 --out=/tmp/stack-ceiling.json
 */
const options = flags({
  rounds: 3,
  systems: 'service,ceiling,ceiling-view,platform',
  rates: '20',
  duration: 20,
  warmup: 10,
  concurrency: 32,
  /**
   * Seconds each open-loop phase runs at its rate before it is measured: the load resumes after the warm-up's pause
   * with a burst of late latencies in every system alike (BENCHMARKS.md, 29 November), which is not the steady state.
   */
  'lead-in': 5,
  'max-duration': 30,
  'settle-timeout': 180,
  /** The service's replicas (the stack's defaults, as docker-compose.yml has them). */
  api: 2,
  delivery: 2,
  /** Events per phase of the service whose stages are read from the rows and the workflows' histories; 0: none. */
  'trace-sample': 200,
  /** Count the service's SQL statements per delivered event in each phase (pg_stat_statements). */
  'pg-stat-statements': false,
  /** Sample the service's Postgres sessions waiting for locks during each phase (its CPU then counts them too). */
  'lock-waits': false,
  /** Comma-separated service roles (`delivery`, `api`) whose replicas run with --cpu-prof; profiles go to this directory. */
  'cpu-prof': '',
  'cpu-prof-dir': '/tmp/donation-webhooks-bench-profiles',
  /** Extra environment for the API and delivery replicas, `KEY=value;KEY2=value` (e.g. `TEMPORAL_WORKER_VERSIONING=false`). */
  env: '',
  /**
   * Variables docker-compose.yml reads from the shell, for every system's stack, `KEY=value;KEY2=value`
   * (e.g. `TEMPORAL_NUM_HISTORY_SHARDS=4`).
   */
  'compose-env': '',
  ...realStackFlags,
  out: '',
});

const phases: Phase[] = [
  ...list(options.rates).map((rate) => ({ rate: Number(rate), durationS: options.duration, leadInS: options['lead-in'] })),
  { concurrency: options.concurrency, durationS: options['max-duration'] },
];

/** The production roles only: the stack runs them as Compose does, without the bench's tunings or traces. */
const PRODUCTION: NamedTuning = { name: 'stack', tuning: {}, relay: {}, layout: 'combined' };

let template: EnvelopeTemplate | undefined;

/** The phases of one run, each measured over every process of the stack (and the bench's own, not counted). */
async function measure(real: RealStack, run: SystemRun, load: EventLoad, receiver: Receiver, answeredOnly = false): Promise<SystemRun> {
  const meter = () => new CpuMeter(real.processes(), () => real.postgresParts());
  for (const phase of phases) {
    process.stderr.write(`  ${run.system}: ${phaseName(phase)}\n`);
    run.phases.push((await runPhase(phase, load, meter, answeredOnly ? answered : untilArrived(receiver, options['settle-timeout']))).report);
  }
  run.loadAverage.after = os.loadavg()[0];
  return run;
}

/** The service, or (`platform`) its platform calls alone: the delivery replicas stopped, the events left in the outbox. */
async function runService(receiver: Receiver, round: number, system: 'service' | 'platform'): Promise<SystemRun> {
  const real = await startRealStack({
    ports: options,
    api: options.api,
    delivery: options.delivery,
    postgresSettings: options['pg-stat-statements'] ? { shared_preload_libraries: 'pg_stat_statements' } : undefined,
    adjust: replicasAs(path.join(options['cpu-prof-dir'], `${system}-${round + 1}`)),
    composeEnv: keyValues(options['compose-env']),
  });
  try {
    await real.configureEndpoint(receiver.url);
    const calls = platformCall(real.stack.apiUrl, real.staffToken);
    if (system === 'platform') {
      // Nothing but what a platform call uses: the API replicas, Caddy and Postgres, as on the dev server.
      const { delivery, temporal, temporalUi, temporalUiGuard } = real.stack.topology;
      for (const { name } of [...delivery, temporalUiGuard, temporalUi, ...[...temporal].reverse()]) await real.stack.stopProcess(name);
      const load = new EventLoad(calls, receiver, `calls-${randomUUID().slice(0, 8)}`, false);
      if (options.warmup > 0) await load.openLoop(20, options.warmup);
      return await measure(real, startRun(system, PRODUCTION.name, round), load, receiver, true);
    }
    const load = new EventLoad(calls, receiver, `svc-${randomUUID().slice(0, 8)}`);
    if (options.warmup > 0) await settle(receiver, await load.openLoop(20, options.warmup), options['settle-timeout']);
    template ??= await captureTemplate(real.db);
    if (options['pg-stat-statements']) await real.db.raw('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const probe: ServiceProbe = {
      db: real.db,
      temporal: () => createTemporalClient({ ...temporalClientOptions(real.stack), namespace: real.stack.namespace }),
      traceSample: options['trace-sample'],
      statements: options['pg-stat-statements'],
      lockWaits: options['lock-waits'],
      settleTimeoutS: options['settle-timeout'],
    };
    const run = startRun(system, PRODUCTION.name, round);
    for (const phase of phases) {
      process.stderr.write(`  ${system}: ${phaseName(phase)}\n`);
      await runServicePhase(phase, load, () => new CpuMeter(real.processes(), () => real.postgresParts()), receiver, run, probe);
    }
    run.loadAverage.after = os.loadavg()[0];
    return run;
  } finally {
    await real.stop();
  }
}

/**
 * The replicas as the options change them: `--env` in their environment; `--cpu-prof`, the replicas of the roles named
 * run with `node --cpu-prof`, writing to `<dir>/<replica>/` when they stop.
 */
function replicasAs(dir: string): (spec: ProcessSpec) => ProcessSpec {
  const profiled = list(options['cpu-prof']);
  const env = keyValues(options.env);
  return (spec) => {
    if (spec.service !== 'api' && spec.service !== 'delivery') return spec;
    const args = profiled.includes(spec.service) ? ['--cpu-prof', `--cpu-prof-dir=${path.join(dir, spec.name)}`, ...spec.args] : spec.args;
    return { ...spec, args, env: { ...spec.env, ...env } };
  };
}

/** The ceiling's process (bench/ceiling/worker.ts) against the same Temporal services and Postgres, nothing else. */
async function runCeiling(receiver: Receiver, round: number, system: CeilingSystem): Promise<SystemRun> {
  if (!template) throw new Error('the ceiling sends the service envelope: run the service first (--systems=service,ceiling)');
  const real = await startRealStack({ ports: options, api: 1, delivery: 1, temporalOnly: true, composeEnv: keyValues(options['compose-env']) });
  try {
    return await measureCeilingOn(real, template, receiver, { system, round, start: { view: VIEW_OF_CEILING[system], eager: true }, offerOf: (start) => start });
  } finally {
    await real.stop();
  }
}

/**
 * The floor as one system (bench/ceiling.ts has the same): the platform calls and the ceiling-view on one stack at
 * once, the delivery replicas and the UI stopped as for `platform`, the ceiling's process on the stack's Temporal. Each
 * event is a platform call and, once answered, the view's workflow start; the processes share the cores as the
 * service's do. `floor-outbox` adds the guarantees' work, as in bench/ceiling.ts: the ceiling's process relays the
 * platform calls' events from the stack's outbox and makes each attempt with the attempt's statements, on a worker
 * versioned where the delivery replicas are.
 */
async function runFloor(receiver: Receiver, round: number, system: 'floor' | 'floor-outbox'): Promise<SystemRun> {
  if (!template) throw new Error(`the ${system} sends the service envelope: run the service first (--systems=service,${system})`);
  const outbox = system === 'floor-outbox';
  const real = await startRealStack({ ports: options, api: options.api, delivery: options.delivery, composeEnv: keyValues(options['compose-env']) });
  try {
    await real.configureEndpoint(receiver.url);
    const { delivery, temporalUi, temporalUiGuard } = real.stack.topology;
    for (const { name } of [...delivery, temporalUiGuard, temporalUi]) await real.stack.stopProcess(name);
    const call = platformCall(real.stack.apiUrl, real.staffToken);
    return await measureCeilingOn(real, template, receiver, {
      system,
      round,
      start: outbox
        ? { view: 'described', eager: true, outboxDatabaseUrl: real.stack.postgresUrl('donations'), versioned: serviceVersioned(keyValues(options.env)) }
        : { view: 'described', eager: true },
      offerOf: (start) => (outbox ? call : async (key) => (await call(key)) && start(key)),
    });
  } finally {
    await real.stop();
  }
}

/**
 * The ceiling's process started on `real`'s Temporal as `start` says (eager starts, as the service's delivery role
 * makes them), each event offered by `offerOf` given the process's own start; warmed up, then measured over the
 * stack's processes and the ceiling's. The ceiling's process is stopped before the stack is.
 */
async function measureCeilingOn(
  real: RealStack,
  envelope: EnvelopeTemplate,
  receiver: Receiver,
  { system, round, start, offerOf }: { system: System; round: number; start: StartOptions; offerOf: (start: Offer) => Offer },
): Promise<SystemRun> {
  const processes = launcher();
  try {
    const { worker, offer } = await startCeilingWorker({
      temporal: { address: real.stack.temporalAddress, tls: temporalTlsSettings(real.stack) },
      subscriberUrl: receiver.url,
      tuning: PRODUCTION.tuning,
      template: envelope,
      start,
      processes,
      logDir: real.stack.logDir,
    });
    const load = new EventLoad(offerOf(offer), receiver, `${system}-${randomUUID().slice(0, 8)}`);
    if (options.warmup > 0) await settle(receiver, await load.openLoop(20, options.warmup), options['settle-timeout']);
    const withWorker: RealStack = { ...real, processes: () => new Map([...real.processes(), ['worker', pidOf(worker)]]) };
    return await measure(withWorker, startRun(system, PRODUCTION.name, round), load, receiver);
  } finally {
    await processes.stop();
  }
}

const RUNNERS: Record<System, (receiver: Receiver, round: number) => Promise<SystemRun>> = {
  service: (receiver, round) => runService(receiver, round, 'service'),
  ceiling: (receiver, round) => runCeiling(receiver, round, 'ceiling'),
  'ceiling-view': (receiver, round) => runCeiling(receiver, round, 'ceiling-view'),
  'ceiling-view-lean': (receiver, round) => runCeiling(receiver, round, 'ceiling-view-lean'),
  platform: (receiver, round) => runService(receiver, round, 'platform'),
  floor: (receiver, round) => runFloor(receiver, round, 'floor'),
  'floor-outbox': (receiver, round) => runFloor(receiver, round, 'floor-outbox'),
};

async function main() {
  const systems = parseSystems(options.systems);
  const receiver = new Receiver();
  await receiver.listen();
  const runs: SystemRun[] = [];
  const machine = {
    ...(await machineInfo()),
    temporal: REAL_STACK_TEMPORAL,
  };
  try {
    for (let round = 0; round < options.rounds; round++) {
      for (const system of inTurn(systems, round)) {
        process.stderr.write(`round ${round + 1}: ${system} (load ${os.loadavg()[0].toFixed(1)})\n`);
        runs.push(await RUNNERS[system](receiver, round));
        if (options.out) writeFileSync(options.out, JSON.stringify({ machine, options, runs }, null, 2));
      }
    }
  } finally {
    await receiver.close();
  }
  process.stdout.write(`${report(runs, [PRODUCTION], machine, phases)}\n`);
}

runMain(main);
