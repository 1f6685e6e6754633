import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, statSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { projectRoot } from '../src/config';
import type { StackProcess } from './process';

/** When a started process counts as ready: its port accepts connections, its URL answers 2xx, or it logged this line. */
export type Readiness = { port: number } | { url: string } | { logLine: string };

export interface ChildSpec {
  /** Its name, and its log file's in the log folder. */
  name: string;
  command: string;
  args: string[];
  /** Its whole environment: nothing of this process's reaches it unless named here. */
  env: NodeJS.ProcessEnv;
  /** SIGTERM, then SIGKILL after this long. */
  stopGraceMs: number;
  /** Without it, a process counts as ready once it has been started. */
  ready?: Readiness;
  /** Its working folder; the project's root unless given. */
  cwd?: string;
}

export interface ChildOptions {
  logDir: string;
  /** How long it may take to become ready. */
  readyTimeoutMs?: number;
  /** A Node IPC channel to it (`process().send`), for a bench's process that takes requests. */
  ipc?: boolean;
  /** Hears that it ended while it was meant to run: by itself, not by stop(). */
  onUnexpectedExit?: (code: number | null, logTail: string) => void;
}

/** A process of this machine, started by us. */
export interface ChildProcessEntry extends StackProcess {
  /** The end of its latest run: its exit code (null: ended by a signal). */
  exited(): Promise<number | null>;
  /** Its latest run, for its IPC channel. */
  process(): ChildProcess | undefined;
}

/** The last lines of a log, to quote in a failure. */
function logTail(file: string): string {
  if (!existsSync(file)) return '';
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-15);
  return `\n  ${lines.join('\n  ')}\n(log: ${file})`;
}

const portAnswers = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

/** Whether it is ready now; `logFrom`: where its log began at this run's start (a restart appends to the same file). */
async function answers(ready: Readiness, log: string, logFrom: number): Promise<boolean> {
  if ('port' in ready) return portAnswers(ready.port);
  if ('url' in ready) return (await fetch(ready.url, { signal: AbortSignal.timeout(2_000) })).ok;
  return readFileSync(log).subarray(logFrom).toString('utf8').includes(ready.logLine);
}

const describe = (ready: Readiness) => ('port' in ready ? `port ${ready.port}` : 'url' in ready ? ready.url : `"${ready.logLine}" in its log`);

interface Run {
  child: ChildProcess;
  exited: Promise<number | null>;
  ended: boolean;
  stoppedOnPurpose: boolean;
  logFrom: number;
}

/** A long-running program of this machine as a process of a topology; its output appended to `<logDir>/<name>.log`. */
export function childProcess(spec: ChildSpec, options: ChildOptions): ChildProcessEntry {
  const log = path.join(options.logDir, `${spec.name}.log`);
  let current: Run | undefined;
  const running = () => (current && !current.ended ? current : undefined);
  return {
    name: spec.name,
    log,
    async start() {
      if (running()) throw new Error(`${spec.name} runs already`);
      const logFrom = existsSync(log) ? statSync(log).size : 0;
      // The child writes its log file itself: two pipes into one stream would end it with the first of them (and a
      // late write to the other then crashes this process), and the log goes on if this process dies first.
      const output = openSync(log, 'a');
      const child = spawn(spec.command, spec.args, {
        cwd: spec.cwd ?? projectRoot,
        env: spec.env,
        stdio: options.ipc ? ['ignore', output, output, 'ipc'] : ['ignore', output, output],
      });
      closeSync(output);
      const run: Run = { child, ended: false, stoppedOnPurpose: false, logFrom, exited: Promise.resolve(null) };
      run.exited = new Promise((resolve) => {
        const end = (code: number | null) => {
          run.ended = true;
          resolve(code);
        };
        child.once('exit', end);
        // Not started at all (no such program): no exit follows.
        child.once('error', () => end(null));
      });
      void run.exited.then((code) => {
        if (!run.stoppedOnPurpose) options.onUnexpectedExit?.(code, logTail(log));
      });
      current = run;
    },
    async ready() {
      const run = current;
      if (!run) throw new Error(`${spec.name} was not started`);
      const { ready } = spec;
      if (!ready) return;
      const timeoutMs = options.readyTimeoutMs ?? 60_000;
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        if (run.ended) throw new Error(`${spec.name} exited during start (code ${await run.exited})${logTail(log)}`);
        if (await answers(ready, log, run.logFrom).catch(() => false)) return;
        if (Date.now() > deadline) throw new Error(`${spec.name} not ready after ${timeoutMs / 1000} s (waiting for ${describe(ready)})${logTail(log)}`);
        await delay(100);
      }
    },
    async stop(signal = 'SIGTERM') {
      const run = running();
      if (!run) return;
      run.stoppedOnPurpose = true;
      if (signal === 'SIGKILL') {
        run.child.kill('SIGKILL');
        await run.exited;
        return;
      }
      const kill = setTimeout(() => run.child.kill('SIGKILL'), spec.stopGraceMs);
      run.child.kill('SIGTERM');
      await run.exited;
      clearTimeout(kill);
    },
    pid: () => running()?.child.pid,
    exited: () => current?.exited ?? Promise.reject(new Error(`${spec.name} was not started`)),
    process: () => current?.child,
  };
}

/** A one-off job (Compose: a service other services wait for with service_completed_successfully): it must succeed. */
export function jobProcess(spec: Omit<ChildSpec, 'ready'>, logDir: string): StackProcess {
  const job = childProcess(spec, { logDir });
  return {
    ...job,
    async start() {
      await job.start();
      const code = await job.exited();
      if (code !== 0) throw new Error(`${spec.name} failed (exit ${code})${logTail(job.log)}`);
    },
  };
}
