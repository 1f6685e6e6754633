import { type ChildProcess, spawn } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
import { projectRoot } from '../src/config';
import { freePort } from '../src/shared/free-port';
import { flags, list, runMain } from '../stack/cli';
import { machineInfo } from './support/machine';
import { memoryOf, processGroup, processTree } from './support/processes';
import { markdownTable, median } from './support/stats';

/**
 * Part 4: the start command to a served /healthz, on a fresh data folder (first start: initdb, migrations, demo
 * data, Temporal dev server) and on an existing one, as `node dist/src/main.js` and as `npm start` (which first
 * checks the tools and compiles).
 */
const options = flags({
  runs: 3,
  variants: 'node-fresh,node-existing,npm-existing',
  /** Another built checkout to start (e.g. the commit before an optimisation); default this one. */
  'service-root': '',
  out: '',
});
const root = options['service-root'] || projectRoot;

const COMMANDS: Record<string, { command: string; args: string[]; fresh: boolean }> = {
  'node-fresh': { command: process.execPath, args: ['dist/src/main.js'], fresh: true },
  'node-existing': { command: process.execPath, args: ['dist/src/main.js'], fresh: false },
  'npm-existing': { command: 'npm', args: ['start', '--silent'], fresh: false },
};

async function healthy(url: string): Promise<boolean> {
  try {
    return (await fetch(url)).status === 200;
  } catch {
    return false;
  }
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  process.kill(-child.pid!, 'SIGTERM'); // the whole group: npm, the node it starts, Postgres and Temporal
  await exited;
  // npm may exit before its child has finished stopping Postgres and Temporal.
  for (let i = 0; i < 600 && processGroup(child.pid!).length > 0; i++) await new Promise((r) => setTimeout(r, 50));
}

async function startOnce(variant: string, dataDir: string) {
  const { command, args } = COMMANDS[variant];
  const port = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    EMBEDDED_POSTGRES_PORT: String(await freePort()),
    TEMPORAL_DEV_SERVER_PORT: String(await freePort()),
    TEMPORAL_UI_PORT: String(await freePort()),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'warn',
  };
  const started = performance.now();
  const child = spawn(command, args, { cwd: root, env, stdio: 'ignore', detached: true });
  const url = `http://127.0.0.1:${port}/healthz`;
  try {
    while (!(await healthy(url))) {
      if (child.exitCode !== null) throw new Error(`${variant} exited with ${child.exitCode}`);
      if (performance.now() - started > 300_000) throw new Error(`${variant}: no /healthz after 300 s`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    const seconds = (performance.now() - started) / 1000;
    const rssMb = processTree(child.pid!).reduce((sum, pid) => sum + memoryOf(pid).rssMb, 0);
    return { seconds, rssMb };
  } finally {
    await stop(child);
  }
}

async function main() {
  const machine = await machineInfo();
  const rows = [];
  for (const variant of list(options.variants)) {
    const times: number[] = [];
    const rss: number[] = [];
    const shared = await mkdtemp(path.join(os.tmpdir(), 'donation-webhooks-startup-'));
    await chmod(shared, 0o755);
    // An existing data folder: made by one start that is not measured.
    if (!COMMANDS[variant].fresh) await startOnce('node-existing', shared);
    for (let run = 0; run < options.runs; run++) {
      const dataDir = COMMANDS[variant].fresh ? await mkdtemp(path.join(shared, 'run-')) : shared;
      await chmod(dataDir, 0o755);
      process.stderr.write(`${variant} run ${run + 1}\n`);
      const { seconds, rssMb } = await startOnce(variant, dataDir);
      times.push(seconds);
      rss.push(rssMb);
    }
    await rm(shared, { recursive: true, force: true, maxRetries: 5 });
    rows.push({ variant, 'median s': median(times), 'runs s': times.map((t) => t.toFixed(2)).join(', '), 'RSS of the tree MiB': median(rss) });
  }
  process.stdout.write(`Machine: ${JSON.stringify(machine)}\n\n${markdownTable(rows)}\n`);
  if (options.out) writeFileSync(options.out, JSON.stringify({ machine, rows }, null, 2));
}

runMain(main);
