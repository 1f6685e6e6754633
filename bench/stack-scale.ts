import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { coresTotal, inTurn } from './support/ceiling-report';
import { flags, list, runMain } from '../stack/cli';
import { machineInfo } from './support/machine';
import { type PhaseReport, runPhase } from './support/phase-report';
import { EventLoad, platformCall, untilArrived } from './support/platform-load';
import { CpuMeter } from './support/processes';
import { REAL_STACK_TEMPORAL, realStackFlags, startRealStack } from './support/real-stack';
import { Receiver } from './support/receiver';
import { markdownTable, median } from './support/stats';

/**
 * Horizontal scale on the production-like stack (issue 21): a subscriber that answers in `--answer-ms` (2 s), and
 * 1, 2, 3 delivery replicas, each allowed `--attempts` attempts at once (10: the production worker allows 100,
 * which two shared cores could not keep busy), so that attempt slots, not CPU, bound the rate: at most
 * replicas × attempts ÷ answer time events per second. One stack per round with the most replicas; each
 * configuration stops or starts replicas (stopProcess, startProcess), then a closed loop with `--concurrency` events
 * in flight (enough to keep every slot busy); configurations alternate from round to round.
 *
 *   node dist/bench/stack-scale.js --rounds=3 --replicas=1,2,3 --attempts=10 --answer-ms=2000 --out=/tmp/stack-scale.json
 */
const options = flags({
  rounds: 3,
  replicas: '1,2,3',
  attempts: 10,
  /** Workflow task pollers of each replica (the production worker has 50, each holding a slot while it polls). */
  pollers: 10,
  'answer-ms': 2_000,
  concurrency: 60,
  duration: 40,
  warmup: 15,
  'settle-timeout': 180,
  ...realStackFlags,
  out: '',
});

interface ScaleRun {
  replicas: number;
  round: number;
  loadAverage: { before: number; after: number };
  report: PhaseReport;
}

/**
 * The delivery role with fewer attempt slots: bench/support/tuned-worker.ts in its `delivery` form (worker, relay with
 * eager starts, /metrics), with a local activity slot per attempt and a workflow task slot per attempt and per poller.
 */
const tuning = {
  maxConcurrentLocalActivityExecutions: options.attempts,
  maxConcurrentWorkflowTaskExecutions: options.attempts + options.pollers,
  workflowTaskPollerBehavior: { type: 'simple-maximum', maximum: options.pollers },
};
const TUNED_DELIVERY = [path.join(__dirname, 'support', 'tuned-worker.js'), JSON.stringify(tuning), 'delivery'];

async function runRound(receiver: Receiver, round: number, counts: number[]): Promise<ScaleRun[]> {
  const most = Math.max(...counts);
  const real = await startRealStack({
    ports: options,
    api: 2,
    delivery: most,
    // `node [its options] dist/src/main.js delivery` becomes `node [its options] tuned-worker.js <tuning> delivery`.
    adjust: (spec) => (spec.service === 'delivery' ? { ...spec, args: [...spec.args.filter((arg) => arg.startsWith('-')), ...TUNED_DELIVERY] } : spec),
  });
  const runs: ScaleRun[] = [];
  try {
    await real.configureEndpoint(receiver.url);
    const load = new EventLoad(platformCall(real.stack.apiUrl, real.staffToken), receiver, `scale-${randomUUID().slice(0, 8)}`);
    const replicas = real.stack.topology.delivery.map(({ name }) => name);
    for (const count of inTurn(counts, round)) {
      for (const [index, name] of replicas.entries()) {
        const running = real.stack.processes().has(name);
        if (index < count && !running) await real.stack.startProcess(name);
        if (index >= count && running) await real.stack.stopProcess(name);
      }
      process.stderr.write(`round ${round + 1}: ${count} delivery replica(s) (load ${os.loadavg()[0].toFixed(1)})\n`);
      const before = os.loadavg()[0];
      const finish = untilArrived(receiver, options['settle-timeout']);
      if (options.warmup > 0) await finish(await load.closedLoop(options.concurrency, options.warmup));
      const { report } = await runPhase(
        { concurrency: options.concurrency, durationS: options.duration },
        load,
        () => new CpuMeter(real.processes(), () => real.postgresParts()),
        finish,
      );
      runs.push({ replicas: count, round, loadAverage: { before, after: os.loadavg()[0] }, report });
    }
  } finally {
    await real.stop();
  }
  return runs;
}

function summary(runs: ScaleRun[], counts: number[]): string {
  const bound = (count: number) => (count * options.attempts * 1000) / options['answer-ms'];
  const rateOf = (count: number) => median(runs.filter((run) => run.replicas === count).map((run) => run.report.ratePerS));
  const rows = counts.map((count) => {
    const of = runs.filter((run) => run.replicas === count).map((run) => run.report);
    return {
      'delivery replicas': count,
      'events/s (median)': rateOf(count),
      'runs (events/s)': of.map((report) => report.ratePerS.toFixed(1)).join(', '),
      'bound: replicas × attempts ÷ answer time': bound(count),
      'of the bound': `${Math.round((100 * rateOf(count)) / bound(count))} %`,
      [`÷ ${counts[0]} replica(s)`]: (rateOf(count) / rateOf(counts[0])).toFixed(2),
      'cores busy (median)': median(of.map(coresTotal)),
      'p50 / p95 ms (median)': `${median(of.map((report) => report.p50)).toFixed(0)} / ${median(of.map((report) => report.p95)).toFixed(0)}`,
    };
  });
  const loads = runs.map((run) => `${run.replicas}#${run.round + 1}: ${run.loadAverage.before.toFixed(1)}→${run.loadAverage.after.toFixed(1)}`);
  return [
    `Subscriber answers after ${options['answer-ms']} ms; ${options.attempts} attempts at once per replica; closed loop ×${options.concurrency} for ${options.duration} s.`,
    `Load average (1 min) before→after each run: ${loads.join(', ')}`,
    '',
    markdownTable(rows),
  ].join('\n');
}

async function main() {
  const counts = list(options.replicas).map(Number);
  const receiver = new Receiver(options['answer-ms']);
  await receiver.listen();
  const runs: ScaleRun[] = [];
  const machine = { ...(await machineInfo()), temporal: REAL_STACK_TEMPORAL };
  try {
    for (let round = 0; round < options.rounds; round++) {
      runs.push(...(await runRound(receiver, round, counts)));
      if (options.out) writeFileSync(options.out, JSON.stringify({ machine, options, runs }, null, 2));
    }
  } finally {
    await receiver.close();
  }
  process.stdout.write(`Machine: ${JSON.stringify(machine)}\n\n${summary(runs, counts)}\n`);
}

runMain(main);
