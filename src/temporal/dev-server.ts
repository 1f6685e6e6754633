import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { chmod, mkdir, readdir } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { Connection } from '@temporalio/client';
import { TypedSearchAttributes } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { environmentWithoutTracing } from '../config';
import { DELIVERY_SEARCH_ATTRIBUTES } from '../delivery-rules/search-attributes';
import { portIsFree } from '../shared/free-port';
import { devServerExecutable } from './binaries';
import { devServerUiUrl } from './ui';

/**
 * `temporal server start-dev` arguments for every dev server: ours, the tests', the benchmarks' and the drills'.
 * They register the delivery workflows' search attributes, so that they can start (a workflow carrying an unknown
 * one is refused) and Temporal UI lists them (a no-op when the state file knows them already), and switch on eager
 * workflow start, which the server leaves off unless told (docker-compose.yml does the same in its dynamic config).
 */
export const DEV_SERVER_ARGS: readonly string[] = [
  ...DELIVERY_SEARCH_ATTRIBUTES.flatMap(({ name, type }) => ['--search-attribute', `${name}=${TypedSearchAttributes.toMetadataType(type)}`]),
  ...['--dynamic-config-value', 'system.enableEagerWorkflowStart=true'],
];

export interface DevServerOptions {
  /** Where its state file lives; without it the state is in memory and ends with the server (the benchmarks). */
  dataDir?: string;
  port: number;
  /** Without it the server runs headless, without its Web UI. */
  uiPort?: number;
  namespace: string;
  cliPath?: string;
  /** More `temporal server start-dev` arguments: a drill's or a benchmark's dynamic configuration. */
  extraArgs?: readonly string[];
  /**
   * The file its output is appended to; without it, this process's standard output and error. For our own child
   * only: a server the SDK downloaded and started writes where the SDK has it write.
   */
  logFile?: string;
  /** Called when the started server ends without stop(): the process that relies on it cannot go on as if it ran. */
  onUnexpectedExit?: (exit: DevServerExit) => void;
}

export interface DevServerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Why it could not be started at all (the binary missing or not executable). */
  error?: Error;
}

export interface DevServerHandle {
  address: string;
  /** Unless headless. */
  uiUrl?: string;
  /** Our child's process id; undefined when the SDK started (and owns) the server. */
  pid?: number;
  stop(): Promise<void>;
}

const STATE_FILE = 'temporal.sqlite';

/** How long the server may take to answer after it was started (its first start creates the SQLite schema). */
const START_TIMEOUT_MS = 30_000;

/**
 * util-linux's `setpriv`, where present (Linux): it makes the kernel send the server SIGKILL when this process
 * dies, however it dies (SIGKILL, the OOM killer), which no handler of ours can see.
 */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((candidate) => existsSync(candidate));

/**
 * The state holds workflow histories and activity results: for this user only. The folder is 0700, and files kept
 * from earlier starts are made 0600; the server creates new ones under umask 077 (below).
 */
async function preparePrivateState(dataDir: string): Promise<string> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(dataDir, 0o700);
  for (const name of await readdir(dataDir)) {
    if (name.startsWith(STATE_FILE)) await chmod(path.join(dataDir, name), 0o600);
  }
  return path.join(dataDir, STATE_FILE);
}

/**
 * Resolves when nothing listens on 127.0.0.1:port. Otherwise the start must fail here: the server would not start,
 * yet whatever holds the port (often a dev server that an earlier start left running) would answer in its place.
 */
async function refuseTakenPort(port: number, setting: string): Promise<void> {
  if (await portIsFree(port)) return;
  throw new Error(
    `Port ${port} (${setting}) is taken by another process, perhaps a Temporal dev server that an earlier ` +
      `start left running; this start's own dev server cannot listen there. Stop that process, or set ` +
      `${setting} to a free port.`,
  );
}

/**
 * Whether the frontend at `address` answers for `namespace`. One try per call, the caller's loop being the retry:
 * without the SDK's retrying interceptor no retry is left pending on a channel this closes, and the channel is
 * closed however the try ends, a failed connect included.
 */
async function answers(address: string, namespace: string): Promise<boolean> {
  const connection = Connection.lazy({ address, connectTimeout: 1_000, interceptors: [] });
  try {
    await connection.ensureConnected();
    await connection.workflowService.describeNamespace({ namespace });
    return true;
  } catch {
    return false;
  } finally {
    await connection.close();
  }
}

/** `temporal server start-dev` on loopback, with its state in `dbFilename` (or in memory). */
function serverArgs(options: DevServerOptions, dbFilename: string | undefined): string[] {
  return [
    ...['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(options.port)],
    ...(options.uiPort === undefined ? ['--headless'] : ['--ui-port', String(options.uiPort)]),
    ...['--namespace', options.namespace, ...(dbFilename ? ['--db-filename', dbFilename] : []), '--log-level', 'warn', ...DEV_SERVER_ARGS],
    // As the SDK's own start of it: the server does not call home for version updates.
    ...['--dynamic-config-value', 'frontend.enableServerVersionCheck=false'],
    ...(options.extraArgs ?? []),
  ];
}

/**
 * Resolves once the server at `address` answers while our child still runs (`ended()` says whether it exited); fails
 * when the child exits first, or after START_TIMEOUT_MS.
 */
async function untilAnswering(address: string, namespace: string, ended: () => DevServerExit | undefined, logFile?: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await answers(address, namespace)) || ended()) {
    const exit = ended();
    if (exit?.error) throw new Error(`The Temporal dev server could not be started: ${exit.error.message}`);
    if (exit) throw new Error(`The Temporal dev server exited during its start (code ${exit.code}, signal ${exit.signal}); its own message is ${logFile ? `in ${logFile}` : 'above'}`);
    if (Date.now() > deadline) throw new Error(`The Temporal dev server did not answer on ${address} within ${START_TIMEOUT_MS / 1000} s`);
    await delay(100);
  }
}

/**
 * Starts the CLI in a process group of its own, so that Ctrl-C reaches this process only and the server is stopped
 * after the worker that uses it; and, where setpriv exists, so that the kernel kills it with this process.
 */
function spawnServer(executable: string, args: string[], logFile: string | undefined): ChildProcess {
  const [command, commandArgs] = SETPRIV ? [SETPRIV, ['--pdeathsig', 'KILL', '--', executable, ...args]] : [executable, args];
  const output = logFile === undefined ? 'inherit' : openSync(logFile, 'a');
  try {
    return spawn(command, commandArgs, { detached: true, env: environmentWithoutTracing(), stdio: ['ignore', output, output] });
  } finally {
    if (typeof output === 'number') closeSync(output);
  }
}

/**
 * Starts the Temporal CLI dev server with its Web UI (unless headless), as a child of this process that ends with it:
 * on stop(), on every exit of this process ('exit' runs on process.exit, the end of the event loop and an uncaught
 * exception), and on Linux also when this process is killed. Its state is file-backed under the data directory, so
 * workflows sleeping in retry backoff survive a restart of `npm start` (without a data directory: in memory).
 *
 * It never settles for a server it did not start: a taken port fails before the start, and the start is complete
 * only when the server answers while our child is still running; a child that exits first fails the start.
 */
export async function startDevServer(options: DevServerOptions): Promise<DevServerHandle> {
  const executable = devServerExecutable(options.cliPath);
  await refuseTakenPort(options.port, 'TEMPORAL_DEV_SERVER_PORT');
  if (options.uiPort !== undefined) await refuseTakenPort(options.uiPort, 'TEMPORAL_UI_PORT');
  const dbFilename = options.dataDir === undefined ? undefined : await preparePrivateState(options.dataDir);
  if (executable.type !== 'existing-path') return startDownloadedDevServer(options, dbFilename);
  // The server process inherits the umask it is started with: its database and journal files are created 0600.
  const umask = process.umask(0o077);
  let child: ChildProcess;
  try {
    child = spawnServer(executable.path, serverArgs(options, dbFilename), options.logFile);
  } finally {
    process.umask(umask);
  }

  const killGroup = () => {
    try {
      // SIGKILL: the server has persisted every change before it answered, and SQLite survives a killed process;
      // a graceful stop takes seconds and would not make the state any safer.
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Already gone, or never started.
    }
  };
  process.on('exit', killGroup);
  let state: 'starting' | 'running' | 'stopping' = 'starting';
  let ended: DevServerExit | undefined;
  const exited = new Promise<DevServerExit>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    child.once('error', (error) => resolve({ code: null, signal: null, error }));
  }).then((exit) => {
    ended = exit;
    process.off('exit', killGroup);
    if (state === 'running') options.onUnexpectedExit?.(exit);
    return exit;
  });

  const address = `127.0.0.1:${options.port}`;
  try {
    await untilAnswering(address, options.namespace, () => ended, options.logFile);
  } catch (err) {
    killGroup();
    throw err;
  }
  state = 'running';
  return {
    address,
    uiUrl: options.uiPort === undefined ? undefined : devServerUiUrl(options.uiPort),
    pid: child.pid!,
    async stop() {
      state = 'stopping';
      killGroup();
      await exited;
    },
  };
}

/**
 * Without `.tools` or TEMPORAL_CLI_PATH (a machine that never ran `npm run tools`, e.g. without Python), the SDK
 * downloads the CLI and starts it, as it does for anyone online. The SDK owns that child: it is stopped by stop() and
 * by this process's exit through its closed pipes, but not when this process is killed with SIGKILL (then stop the
 * orphan by hand; the next start refuses the taken port instead of using it).
 */
async function startDownloadedDevServer(options: DevServerOptions, dbFilename: string | undefined): Promise<DevServerHandle> {
  const umask = process.umask(0o077);
  const env = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'cached-download' },
      ip: '127.0.0.1',
      port: options.port,
      ui: options.uiPort !== undefined,
      uiPort: options.uiPort,
      namespace: options.namespace,
      dbFilename,
      extraArgs: ['--log-level', 'warn', ...DEV_SERVER_ARGS, ...(options.extraArgs ?? [])],
    },
  }).finally(() => process.umask(umask));
  return {
    address: `127.0.0.1:${options.port}`,
    uiUrl: options.uiPort === undefined ? undefined : devServerUiUrl(options.uiPort),
    stop: () => env.teardown(),
  };
}
