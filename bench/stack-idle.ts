import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { planPorts } from '../stack/ports';
import { type RunningStack, startStack } from '../stack/stack';
import { flags, keyValues, runMain } from '../stack/cli';
import { machineInfo } from './support/machine';
import { UNTRACED } from './support/real-stack';
import { CpuMeter, memoryOf, processTree, proportionalSetMb } from './support/processes';
import { markdownTable } from './support/stats';

/**
 * The production-like stack of `npm run stack` (docs/stack-without-docker.md#requirements-first-build-footprint): how long it takes to start on a new data folder
 * and on the same folder again, and what each process holds and uses when idle. The Go builds must exist already
 * (their time is the build's, reported by `npm run stack` on its first run).
 */
const options = flags({
  'base-port': 7300,
  api: 2,
  delivery: 2,
  history: 1,
  'no-tls': false,
  'idle-seconds': 60,
  /** Variables docker-compose.yml reads from the shell, `KEY=value;KEY2=value` (e.g. `TEMPORAL_NUM_HISTORY_SHARDS=4`). */
  'compose-env': '',
});

async function timedStart(dataDir: string): Promise<{ stack: RunningStack; seconds: number }> {
  const started = performance.now();
  const stack = await startStack({
    dataDir,
    ports: planPorts({ basePort: options['base-port'], api: options.api, delivery: options.delivery, history: options.history }),
    tls: !options['no-tls'],
    shellEnv: { ...UNTRACED, ...keyValues(options['compose-env']) },
    log: () => undefined,
  });
  return { stack, seconds: (performance.now() - started) / 1000 };
}

async function main(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'donation-webhooks-stack-idle-'));
  await chmod(dataDir, 0o755);
  try {
    const first = await timedStart(dataDir);
    await first.stack.stop();
    const second = await timedStart(dataDir);
    try {
      const processes = second.stack.processes();
      const cpu = new CpuMeter(processes);
      await new Promise((resolve) => setTimeout(resolve, options['idle-seconds'] * 1000));
      const used = cpu.used();
      const rows: Array<Record<string, string | number>> = [...processes].map(([name, pid]) => {
        const tree = processTree(pid);
        return {
          process: name,
          processes: tree.length,
          'RSS MiB': memoryOf(pid).rssMb,
          'PSS MiB (with children)': proportionalSetMb(tree),
          'CPU % of a core': used[name].cores * 100,
        };
      });
      const total = (column: string) => rows.reduce((sum, row) => sum + Number(row[column]), 0);
      rows.push({
        process: 'all',
        processes: total('processes'),
        'RSS MiB': '',
        'PSS MiB (with children)': total('PSS MiB (with children)'),
        'CPU % of a core': total('CPU % of a core'),
      });
      process.stdout.write(`${JSON.stringify(await machineInfo())}\n`);
      process.stdout.write(`first start (new data folder): ${first.seconds.toFixed(1)} s; second start (same folder): ${second.seconds.toFixed(1)} s\n\n`);
      process.stdout.write(`Idle for ${options['idle-seconds']} s after the second start:\n\n${markdownTable(rows)}\n`);
    } finally {
      await second.stack.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

runMain(main);
