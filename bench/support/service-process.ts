import { type ChildProcess, spawn } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../../src/config';

export type Role = 'all' | 'api' | 'worker' | 'relay' | 'delivery';

/** The log line each role writes when it is ready (src/main.ts). */
const READY_MESSAGE: Record<Role, string> = {
  all: 'Ready in',
  api: '"msg":"API listening"',
  worker: '"msg":"delivery worker running"',
  relay: '"msg":"outbox relay running"',
  delivery: '"msg":"delivery worker and outbox relay running"',
};

export interface ServiceProcess {
  role: Role;
  pid: number;
  logFile: string;
  /** The process itself, for a script started with an IPC channel (`ipc`). */
  child: ChildProcess;
  /** SIGTERM, then wait for the exit (a CPU profile is written on exit). */
  stop(): Promise<void>;
}

export interface ServiceOptions {
  env: Record<string, string>;
  logFile: string;
  nodeArgs?: string[];
  /** The built checkout to run (another one than this, e.g. the version before an optimisation); default this one. */
  root?: string;
  /**
   * A compiled script of this checkout that runs the role instead of `dist/src/main.js <role>` (a bench variant of
   * it, e.g. support/tuned-worker.ts), with its arguments, and the line it logs when ready if not the role's.
   */
  script?: { path: string; args: string[]; readyMessage?: string };
  /** Open a Node IPC channel to the process (`child.send`, `process.on('message')`). */
  ipc?: boolean;
}

/** Starts `node dist/src/main.js <role>` with its output in a log file and waits until it says it is ready. */
export async function startService(
  role: Role,
  { env, logFile, nodeArgs = [], root = projectRoot, script, ipc = false }: ServiceOptions,
): Promise<ServiceProcess> {
  const log = openSync(logFile, 'a');
  const command = script ? [script.path, ...script.args] : [path.join(root, 'dist', 'src', 'main.js'), role];
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, ...command], {
    cwd: root,
    env: { ...process.env, ...env },
    stdio: ipc ? ['ignore', log, log, 'ipc'] : ['ignore', log, log],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const deadline = Date.now() + 120_000;
  const ready = script?.readyMessage ?? READY_MESSAGE[role];
  while (!readFileSync(logFile, 'utf8').includes(ready)) {
    if (child.exitCode !== null) throw new Error(`${role} exited (code ${child.exitCode}); see ${logFile}`);
    if (Date.now() > deadline) throw new Error(`${role} not ready after 120 s; see ${logFile}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    role,
    pid: child.pid ?? 0,
    logFile,
    child,
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
