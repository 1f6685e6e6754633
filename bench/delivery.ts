import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { postToSubscriber } from './ceiling/activities';
import { flags, keyValues, list, runMain } from '../stack/cli';
import { machineInfo } from './support/machine';
import { EventLoad, platformCall, settle, untilArrived } from './support/platform-load';
import { type PhaseReport, runPhase } from './support/phase-report';
import { stages } from './support/stages';
import { CpuMeter, MemorySampler, memoryOf } from './support/processes';
import { Receiver } from './support/receiver';
import { type BenchRole, startStack, type Stack } from './support/stack';
import { readStatements, resetStatements, statementRow } from './support/statements';
import { markdownTable, summarize } from './support/stats';
import { pidOf } from '../stack/process';

/**
 * Part 1: webhook delivery end to end (platform call → 2xx at the subscriber) at fixed open-loop rates and at the
 * most the system sustains (closed loop), against a bare loop POSTing the same payloads with the same concurrency.
 */
const options = flags({
  rates: '50,200',
  duration: 30,
  warmup: 10,
  concurrency: 64,
  'max-duration': 30,
  'bare-duration': 10,
  'settle-timeout': 120,
  /** Comma-separated roles to run with --cpu-prof; the profiles go to this directory. */
  'cpu-prof': '',
  'cpu-prof-dir': '/tmp/donation-webhooks-bench-profiles',
  'pg-stat-statements': false,
  /** Extra environment for the service processes, `KEY=value;KEY2=value`. */
  env: '',
  /** Temporal dev server dynamic config, `key=json;key2=json`. */
  'temporal-config': '',
  /** Another built checkout of the service to measure (e.g. the commit before an optimisation). */
  'service-root': '',
  out: '',
});

/** The bound: `concurrency` loops POSTing stored payloads to the same subscriber, as the activity does, nothing else. */
async function bareLoop(stack: Stack, receiver: Receiver, concurrency: number, durationS: number) {
  const payloads: Buffer[] = (await stack.db('webhook_events').select('payload').orderBy('id', 'desc').limit(1000)).map(
    (row: { payload: string }) => Buffer.from(row.payload, 'utf8'),
  );
  const latencies: number[] = [];
  let failures = 0;
  let next = 0;
  const start = performance.now();
  const endAt = start + durationS * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < endAt) {
        const sentAt = performance.now();
        const exchange = await postToSubscriber(receiver.url, payloads[next++ % payloads.length]);
        if (exchange.kind === 'response' && exchange.status === 200) latencies.push(performance.now() - sentAt);
        else failures += 1;
      }
    }),
  );
  return { ratePerS: latencies.length / ((performance.now() - start) / 1000), failures, ...summarize(latencies) };
}

const PROCESS_NAMES = ['api', 'relay', 'worker', 'postgres', 'temporal', 'bench'];

async function main() {
  const roles: BenchRole[] = ['api', 'relay', 'worker'];
  const receiver = new Receiver();
  await receiver.listen();
  const profiled = list(options['cpu-prof']) as BenchRole[];
  const stack = await startStack({
    roles,
    env: keyValues(options.env),
    cpuProfile: profiled.length > 0 ? { roles: profiled, dir: options['cpu-prof-dir'] } : undefined,
    pgStatStatements: options['pg-stat-statements'],
    temporalDynamicConfig: list(options['temporal-config'].replaceAll(';', ',')),
    serviceRoot: options['service-root'] || undefined,
  });
  try {
    await stack.configureEndpoint(receiver.url);
    const machine = await machineInfo(stack.db);
    const load = new EventLoad(platformCall(stack.apiUrl, stack.staffToken), receiver, `bench-${randomUUID().slice(0, 8)}`);
    const processes = new Map([...stack.processes(), ['bench', process.pid]]);
    const meter = () => new CpuMeter(processes);
    const workerMemory = new MemorySampler(pidOf(stack.services.get('worker')!));

    if (options.warmup > 0) {
      process.stderr.write(`warm-up: 50/s for ${options.warmup} s\n`);
      await settle(receiver, await load.openLoop(50, options.warmup), options['settle-timeout']);
    }
    if (options['pg-stat-statements']) await resetStatements(stack.db);

    const phases: PhaseReport[] = [];
    let stageRows: unknown[] = [];
    let stageRate = 0;
    for (const rate of list(options.rates).map(Number)) {
      process.stderr.write(`open loop: ${rate}/s for ${options.duration} s\n`);
      const { report, timings } = await runPhase({ rate, durationS: options.duration }, load, meter, untilArrived(receiver, options['settle-timeout']));
      phases.push(report);
      if (rate === 200 || stageRows.length === 0) {
        stageRows = await stages(stack, receiver, load, new Set(timings.map((timing) => timing.key)));
        stageRate = rate;
      }
    }

    process.stderr.write(`closed loop: ${options.concurrency} in flight for ${options['max-duration']} s\n`);
    const { report: maximum } = await runPhase(
      { concurrency: options.concurrency, durationS: options['max-duration'] },
      load,
      meter,
      untilArrived(receiver, options['settle-timeout']),
    );
    phases.push(maximum);
    // Counted before the bare loop, which POSTs stored payloads again by design.
    const duplicates = receiver.duplicates;

    process.stderr.write(`bare loop: ${options.concurrency} in flight for ${options['bare-duration']} s\n`);
    const bareCpu = meter();
    const bare = await bareLoop(stack, receiver, options.concurrency, options['bare-duration']);
    const bareCores = Object.fromEntries(Object.entries(bareCpu.used()).map(([name, use]) => [name, Number(use.cores.toFixed(2))]));

    const memory = Object.fromEntries([...stack.services].map(([role, service]) => [role, memoryOf(pidOf(service))]));
    const statements = options['pg-stat-statements'] ? await readStatements(stack.db) : [];
    const results = {
      machine,
      options,
      phases,
      bare,
      ratioToBare: maximum.ratePerS / bare.ratePerS,
      stages: { rate: stageRate, rows: stageRows },
      memoryMb: memory,
      workerPeakSampledRssMb: workerMemory.peakMb,
      duplicates,
      statements,
    };
    workerMemory.stop();

    const lines = [
      `Machine: ${JSON.stringify(machine)}`,
      '',
      markdownTable(
        phases.map(({ cores, cpuMsPerEvent, ...phase }) => ({
          ...phase,
          'cores api/relay/worker/pg/temporal/bench': PROCESS_NAMES.map((name) => cores[name].toFixed(2)).join(' / '),
          'CPU ms per event, same order': PROCESS_NAMES.map((name) => cpuMsPerEvent[name].toFixed(1)).join(' / '),
          'CPU ms per event, service total': PROCESS_NAMES.filter((name) => name !== 'bench').reduce((sum, name) => sum + cpuMsPerEvent[name], 0),
        })),
      ),
      '',
      `Bare loop (×${options.concurrency}, ${options['bare-duration']} s): ${bare.ratePerS.toFixed(0)}/s, p50 ${bare.p50.toFixed(1)} ms, ` +
        `p95 ${bare.p95.toFixed(1)} ms, failures ${bare.failures}; cores ${JSON.stringify(bareCores)}`,
      `End to end at max / bare loop: ${(results.ratioToBare * 100).toFixed(1)} %`,
      '',
      `Stages at ${stageRate}/s (ms):`,
      markdownTable(stageRows as Array<Record<string, string | number>>),
      '',
      `Memory (MiB): ${JSON.stringify(memory)}; deliveries received more than once: ${duplicates}`,
    ];
    if (statements.length > 0) lines.push('', 'pg_stat_statements (top by total time):', markdownTable(statements.map(statementRow)));
    process.stdout.write(`${lines.join('\n')}\n`);
    if (options.out) writeFileSync(options.out, JSON.stringify(results, null, 2));
  } finally {
    await stack.stop();
    await receiver.close();
  }
}

runMain(main);
