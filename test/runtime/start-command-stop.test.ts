import type { ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { processesMentioning } from '../support/processes';
import { PRODUCTION_ENV } from '../support/production-env';
import { startTestDevServer } from '../support/temporal';
import { spawnTypeScript } from '../support/typescript-process';

/*
 * The start command in its embedded default (its own Postgres and Temporal dev server), as a real process with
 * production settings: whatever stops it, nothing it started keeps running, and it never runs on a Temporal server
 * that is not its own (docs/embedded-default.md).
 */

const MAIN = path.join(__dirname, '..', '..', 'src', 'main.ts');

let root: string;
let dataDir: string;

beforeAll(async () => {
  // As root, the `postgres` user must pass through every folder above DATA_DIR; mkdtemp makes a 0700 one.
  root = await mkdtemp(path.join(os.tmpdir(), 'start-command-stop-'));
  await chmod(root, 0o755);
  dataDir = path.join(root, 'data');
});

afterAll(async () => {
  for (const { pid } of processesMentioning(root)) process.kill(pid, 'SIGKILL');
  await rm(root, { recursive: true, force: true });
});

/** What runs on this test's data (the dev server on its state file, Postgres on its cluster folder), by program. */
const leftOver = () => [...new Set(processesMentioning(dataDir).map(({ command }) => path.basename(command.split(' ')[0])))].sort();

const commands: ChildProcess[] = [];

// A test that failed may leave its start command, or a server on the shared data folder, which would fail the next
// start for another reason.
afterEach(async () => {
  for (const command of commands.splice(0)) if (command.exitCode === null && command.signalCode === null) command.kill('SIGKILL');
  for (const { pid } of processesMentioning(dataDir)) process.kill(pid, 'SIGKILL');
  await eventually(async () => leftOver().length === 0, { what: 'the servers of a failed test to end' });
});

interface Start {
  child: ChildProcess;
  /** The ports it was given: PORT is the API's. */
  ports: Record<string, string>;
  exited: Promise<number | null>;
  output(): string;
  waitFor(text: string): Promise<void>;
}

async function startCommand(env: Record<string, string> = {}): Promise<Start> {
  const ports = Object.fromEntries(
    await Promise.all(['PORT', 'EMBEDDED_POSTGRES_PORT', 'TEMPORAL_DEV_SERVER_PORT', 'TEMPORAL_UI_PORT'].map(async (name) => [name, String(await freePort())])),
  );
  const child = spawnTypeScript(MAIN, [], {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    ...PRODUCTION_ENV,
    ...(process.env.TEMPORAL_CLI_PATH ? { TEMPORAL_CLI_PATH: process.env.TEMPORAL_CLI_PATH } : {}),
    DATA_DIR: dataDir,
    ...ports,
    ...env,
  });
  commands.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // 'exit', not 'close': a child left running would hold the output pipes open.
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    ports,
    exited,
    output: () => output,
    // A start that failed is reported at once, with what it said, instead of after the time out.
    waitFor: (text) =>
      eventually(
        async () => {
          if (output.includes(text)) return true;
          if (child.exitCode !== null || child.signalCode !== null) throw new Error(`The start ended (${child.exitCode ?? child.signalCode}) before "${text}":\n${output}`);
          return false;
        },
        { timeoutMs: 90_000, what: () => `"${text}" in:\n${output}` },
      ).then(() => undefined),
  };
}

const READY = 'Ctrl-C stops everything';

// SIGTERM, the other signal, in the next test.
test.each(['SIGINT', 'SIGHUP'] as const)('%s to the start command alone stops everything it started, and it exits 0', async (signal) => {
  const start = await startCommand();
  await start.waitFor(READY);
  expect(leftOver()).toEqual(['postgres', 'temporal']);
  start.child.kill(signal);
  expect(await start.exited).toBe(0);
  await eventually(async () => leftOver().length === 0, { what: () => `nothing left running, found ${leftOver().join(', ')}` });
}, 120_000);

test('while a client holds the stop up, a second signal ends the process at once, and its children with it', async () => {
  const start = await startCommand();
  await start.waitFor(READY);
  const port = Number(start.ports.PORT);
  // A request whose body never finishes arriving: closing the API waits for it. The interim 100 says the API has
  // taken the request in (headers read, its body awaited); a request still in the socket's buffer at the stop would
  // be an idle connection, which a stopping replica closes at once (src/http/graceful-close.ts).
  const client = net.connect(port, '127.0.0.1');
  await new Promise((resolve) => client.once('connect', resolve));
  client.on('error', () => undefined);
  const continued = new Promise((resolve) => client.on('data', (chunk: Buffer) => chunk.toString().startsWith('HTTP/1.1 100') && resolve(undefined)));
  client.write('POST /authentication/create HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n');
  await continued;
  start.child.kill('SIGTERM');
  await start.waitFor('"msg":"stopping"');
  // The stop goes in order: the API first, the servers it relies on after it.
  expect(start.child.exitCode).toBeNull();
  expect(leftOver()).toEqual(['postgres', 'temporal']);
  start.child.kill('SIGINT');
  expect(await start.exited).toBe(1);
  expect(start.output()).toContain('"msg":"stopping at once"');
  await eventually(async () => leftOver().length === 0, { what: () => `nothing left running, found ${leftOver().join(', ')}` });
  client.destroy();
}, 120_000);

test('SIGKILL to the start command ends its Temporal dev server too; the next start names the Postgres left', async () => {
  const start = await startCommand();
  await start.waitFor(READY);
  start.child.kill('SIGKILL');
  await start.exited;
  await eventually(async () => !leftOver().includes('temporal'), { what: 'the dev server to end' });
  // Postgres, started by its package, outlives a SIGKILL: the next start fails, and says why and what to do.
  const [postgres] = processesMentioning(dataDir);
  const again = await startCommand();
  expect(await again.exited).toBe(1);
  expect(again.output()).toContain(
    `"msg":"start-up failed: The embedded Postgres in ${path.join(dataDir, 'postgres')} is still running as pid ${postgres.pid} `,
  );
  expect(again.output()).toContain(`Stop that one (kill ${postgres.pid}: Postgres shuts down cleanly on SIGTERM) and start again.`);
  // A fast shutdown for the next test.
  for (const { pid } of processesMentioning(dataDir)) process.kill(pid, 'SIGINT');
  await eventually(async () => leftOver().length === 0, { what: 'Postgres to stop' });
}, 120_000);

test('a second start on a DATA_DIR a running start holds names that start, not its Postgres (npm killed, the service left)', async () => {
  const first = await startCommand();
  await first.waitFor(READY);
  const second = await startCommand();
  expect(await second.exited).toBe(1);
  expect(second.output()).toContain(`is in use by another start of the service, still running as pid ${first.child.pid} `);
  expect(second.output()).toContain(`Stop that start (kill ${first.child.pid}: it stops its Postgres and dev server with it)`);
  first.child.kill('SIGTERM');
  expect(await first.exited).toBe(0);
  await eventually(async () => leftOver().length === 0, { what: () => `nothing left running, found ${leftOver().join(', ')}` });
}, 180_000);

test('a Temporal server already on the dev server port fails the start clearly; it is never used', async () => {
  const foreign = await startTestDevServer();
  try {
    const start = await startCommand({ TEMPORAL_DEV_SERVER_PORT: foreign.address.split(':')[1] });
    expect(await start.exited).toBe(1);
    expect(start.output()).toContain(`(TEMPORAL_DEV_SERVER_PORT) is taken by another process`);
    expect(start.output()).toContain('"msg":"start-up failed: Port ');
    expect(start.output()).not.toContain('Temporal dev server started');
    expect(start.output()).not.toContain(READY);
    await eventually(async () => leftOver().length === 0, { what: () => `nothing left running, found ${leftOver().join(', ')}` });
  } finally {
    await foreign.stop();
  }
}, 120_000);
