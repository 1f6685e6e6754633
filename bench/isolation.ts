import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { freePort } from '../src/shared/free-port';
import { flags, keyValues, runMain } from '../stack/cli';
import { machineInfo } from './support/machine';
import { EventLoad, platformCall, settle } from './support/platform-load';
import { CpuMeter, MemorySampler, memoryOf } from './support/processes';
import { Receiver } from './support/receiver';
import { startStack, type Stack } from './support/stack';
import { stages } from './support/stages';
import { markdownTable, summarize } from './support/stats';
import { pidOf } from '../stack/process';

/**
 * Part 2: isolation. Fresh events' latency with an idle system, then with `backlog` events sleeping in retry
 * backoff against a dead subscriber (connection refused), and the worker's resident memory meanwhile.
 */
const options = flags({
  backlog: 10_000,
  rate: 10,
  duration: 30,
  warmup: 10,
  /** Seconds to wait until the whole backlog sleeps with no attempt due during the measurement. */
  'fill-timeout': 2400,
  env: '',
  /** Extra node options of the worker process, space separated (e.g. `--trace-gc`, `--max-old-space-size=256`). */
  'worker-node-args': '',
  /** Keep the service logs in this folder. */
  logs: '',
  out: '',
});

/** Events for an endpoint nobody listens on, written straight into the outbox as the platform would. */
async function insertDeadEvents(stack: Stack, count: number): Promise<{ endpointId: number; firstId: number; lastId: number }> {
  const deadUrl = `http://127.0.0.1:${await freePort()}/webhooks`;
  const [{ id: endpointId }] = await stack.db('webhook_endpoints')
    .insert({ platform: 'bench-dead', url: deadUrl, payload_version: 'v2.1', events: ['donation.completed'] })
    .returning('id');
  const { payload: template } = await stack.db('webhook_events').select('payload').orderBy('id', 'desc').first();
  const { rows } = await stack.db.raw(
    `WITH ids AS (SELECT nextval(pg_get_serial_sequence('webhook_events', 'id')) AS id FROM generate_series(1, ?))
     INSERT INTO webhook_events (id, endpoint_id, event_type, payload_version, source_key, payload)
     SELECT id, ?, 'donation.completed', 'v2.1', 'bench-dead:' || id, regexp_replace(?, '^\\{"id":\\d+', '{"id":' || id)
       FROM ids
     RETURNING id`,
    [count, endpointId, template],
  );
  const ids = rows.map((row: { id: number }) => Number(row.id));
  return { endpointId, firstId: Math.min(...ids), lastId: Math.max(...ids) };
}

/**
 * Where the backlog stands: `asleep` counts events in backoff whose next attempt is not due within `quietS`
 * seconds (so that none wakes while fresh events are measured); `afterFirst` / `afterSecond` by attempts made.
 */
async function backlogState(stack: Stack, endpointId: number, quietS: number) {
  const { rows } = await stack.db.raw(
    `SELECT count(*) FILTER (WHERE status = 'failed' AND next_attempt_at > now() + make_interval(secs => ?)) AS asleep,
            count(*) FILTER (WHERE attempts = 1) AS after_first,
            count(*) FILTER (WHERE attempts = 2) AS after_second,
            count(*) FILTER (WHERE workflow_started_at IS NULL) AS unstarted
       FROM webhook_events WHERE endpoint_id = ?`,
    [quietS, endpointId],
  );
  const [row] = rows;
  return {
    asleep: Number(row.asleep),
    afterFirst: Number(row.after_first),
    afterSecond: Number(row.after_second),
    unstarted: Number(row.unstarted),
  };
}

async function main() {
  const receiver = new Receiver();
  await receiver.listen();
  const stack = await startStack({
    roles: ['api', 'relay', 'worker'],
    env: keyValues(options.env),
    nodeArgs: { worker: options['worker-node-args'].split(' ').filter(Boolean) },
    keepLogsIn: options.logs || undefined,
  });
  try {
    await stack.configureEndpoint(receiver.url);
    const machine = await machineInfo(stack.db);
    const worker = stack.services.get('worker')!;
    const workerMemory = new MemorySampler(pidOf(worker));
    const processes = stack.processes();
    const stageTables: string[] = [];
    const load = new EventLoad(platformCall(stack.apiUrl, stack.staffToken), receiver, `iso-${randomUUID().slice(0, 8)}`);
    const measure = async (phase: string) => {
      process.stderr.write(`${phase}: ${options.rate}/s for ${options.duration} s\n`);
      const cpu = new CpuMeter(processes);
      const timings = await load.openLoop(options.rate, options.duration);
      const result = await settle(receiver, timings, 120);
      stageTables.push(`${phase} (ms):\n${markdownTable(await stages(stack, receiver, load, new Set(timings.map((t) => t.key))))}`);
      const cores = Object.fromEntries(Object.entries(cpu.used()).map(([name, use]) => [name, Number(use.cores.toFixed(2))]));
      return { phase, ...summarize(result.latenciesMs), delivered: result.delivered, sent: result.sent, cores, workerRssMb: memoryOf(pidOf(worker)).rssMb };
    };

    process.stderr.write(`warm-up: 50/s for ${options.warmup} s\n`);
    await settle(receiver, await load.openLoop(50, options.warmup), 120);
    const idle = await measure('idle');
    const idleWorkerRssMb = memoryOf(pidOf(worker)).rssMb;
    const workerPeakBeforeBacklogMb = workerMemory.peakMb;
    workerMemory.reset();

    process.stderr.write(`backlog: ${options.backlog} events for a dead subscriber\n`);
    const fillStarted = performance.now();
    const dead = await insertDeadEvents(stack, options.backlog);
    const quietS = options.duration + 60; // the fresh load and its settling
    let state = await backlogState(stack, dead.endpointId, quietS);
    const fillCpu = new CpuMeter(processes);
    let firstAttemptsS: number | undefined;
    // When first attempts take longer than the 5-minute backoff, the early events are retried meanwhile; then wait
    // for the quiet stretch after the second attempts, when all sleep in the 15-minute backoff.
    while (state.asleep < options.backlog) {
      const elapsedS = (performance.now() - fillStarted) / 1000;
      if (elapsedS > options['fill-timeout']) throw new Error(`backlog not asleep: ${JSON.stringify(state)}`);
      if (firstAttemptsS === undefined && state.afterFirst + state.afterSecond === options.backlog) firstAttemptsS = elapsedS;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      state = await backlogState(stack, dead.endpointId, quietS);
    }
    const fillS = (performance.now() - fillStarted) / 1000;
    firstAttemptsS ??= fillS;
    const workerPeakWhileFillingMb = workerMemory.peakMb;
    const fillCores = Object.fromEntries(Object.entries(fillCpu.used()).map(([name, use]) => [name, Number(use.cores.toFixed(2))]));
    process.stderr.write(`backlog asleep after ${fillS.toFixed(1)} s (first attempts done after ${firstAttemptsS.toFixed(1)} s): ${JSON.stringify(state)}\n`);

    workerMemory.reset();
    const loaded = await measure(`${options.backlog} in backoff`);
    const after = await backlogState(stack, dead.endpointId, 0);
    const results = {
      machine,
      options,
      idle,
      loaded,
      ratioP95: loaded.p95 / idle.p95,
      fill: {
        firstAttemptsS,
        firstAttemptsPerS: options.backlog / firstAttemptsS,
        allAsleepS: fillS,
        cores: fillCores,
        stateBefore: state,
        stateAfter: after,
      },
      worker: {
        idleRssMb: idleWorkerRssMb,
        peakSampledBeforeBacklogMb: workerPeakBeforeBacklogMb,
        peakSampledWhileFillingMb: workerPeakWhileFillingMb,
        rssWithBacklogMb: loaded.workerRssMb,
        peakSampledWhileBacklogMb: workerMemory.peakMb,
        peakRssLifetimeMb: memoryOf(pidOf(worker)).peakRssMb,
      },
      temporalRssMb: memoryOf(pidOf(stack.temporal!)).rssMb,
    };
    workerMemory.stop();
    process.stdout.write(
      [
        `Machine: ${JSON.stringify(machine)}`,
        '',
        markdownTable([idle, loaded].map(({ cores, ...row }) => ({ ...row, cores: JSON.stringify(cores) }))),
        '',
        `p95 with backlog / idle p95: ${results.ratioP95.toFixed(2)}`,
        `Backlog of ${options.backlog}: first attempts done in ${firstAttemptsS.toFixed(1)} s (${results.fill.firstAttemptsPerS.toFixed(1)}/s), ` +
          `all asleep with nothing due for ${quietS} s after ${fillS.toFixed(1)} s, ` +
          `state before measuring ${JSON.stringify(state)}, after ${JSON.stringify(after)}; cores while filling ${JSON.stringify(fillCores)}`,
        `Worker RSS (MiB): ${JSON.stringify(results.worker)}; Temporal dev server RSS ${results.temporalRssMb.toFixed(0)} MiB`,
        '',
        ...stageTables,
      ].join('\n') + '\n',
    );
    if (options.out) writeFileSync(options.out, JSON.stringify(results, null, 2));
  } finally {
    await stack.stop();
    await receiver.close();
  }
}

runMain(main);
