import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type Child, portAnswers, startChild, waitFor } from '../drills/support/processes';
import type { ProcessSpec } from './topology';

/**
 * The stack's processes: long-running ones started and awaited until ready, one-off jobs run to success, and every
 * step of the stop (a process, or anything else that was started) taken in the reverse order of the start.
 */

export interface Supervisor {
  /** Starts a long-running process and waits until it is ready; says so when it ends while the stack runs. */
  launch(spec: ProcessSpec, timeoutMs: number): Promise<Child>;
  /** A one-off job: runs to completion, and must succeed (Compose: service_completed_successfully). */
  runJob(spec: ProcessSpec): Promise<void>;
  /** Something else started (Postgres in this process) and how to stop it. */
  onStop(name: string, step: () => Promise<void>): void;
  /** The long-running processes started, by name. */
  readonly running: ReadonlyMap<string, Child>;
  /** Stops everything in the reverse order of its start; the same promise on every call. */
  stop(): Promise<void>;
}

/** The last lines of a process's log, for a message about it. */
export function logTail(logDir: string, name: string): string {
  const file = path.join(logDir, `${name}.log`);
  if (!existsSync(file)) return '';
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-15);
  return `\n  ${lines.join('\n  ')}\n(log: ${file})`;
}

/** Whether a process is ready, as its spec says: its port answers, or its URL answers 2xx. */
function readiness(spec: ProcessSpec): { what: string; check: () => Promise<boolean> } | undefined {
  const { ready } = spec;
  if (!ready) return undefined;
  if ('port' in ready) return { what: `${spec.name} on port ${ready.port}`, check: () => portAnswers(ready.port) };
  return { what: `${spec.name} at ${ready.url}`, check: async () => (await fetch(ready.url, { signal: AbortSignal.timeout(2_000) })).ok };
}

export function createSupervisor(logDir: string, log: (line: string) => void): Supervisor {
  const running = new Map<string, Child>();
  const stops: Array<{ name: string; step: () => Promise<void> }> = [];
  let stopping: Promise<void> | undefined;
  const onStop = (name: string, step: () => Promise<void>) => {
    stops.push({ name, step });
  };

  return {
    running,
    onStop,
    stop: () =>
      (stopping ??= (async () => {
        for (const { name, step } of stops.reverse()) {
          const started = Date.now();
          await step().catch((err: unknown) => log(`while stopping ${name}: ${(err as Error).message}`));
          log(`  stopped ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
        }
      })()),

    async launch(spec, timeoutMs) {
      const child = startChild(spec.name, spec.command, spec.args, spec.env, logDir);
      running.set(spec.name, child);
      void child.exited.then((code) => {
        if (!stopping) log(`${spec.name} exited (code ${code}) while the stack runs${logTail(logDir, spec.name)}`);
      });
      onStop(spec.name, async () => {
        const kill = setTimeout(() => void child.kill('SIGKILL'), spec.stopGraceMs);
        await child.kill('SIGTERM');
        clearTimeout(kill);
      });
      const ready = readiness(spec);
      if (!ready) return child;
      // Thrown synchronously, out of waitFor: a process that ended will not become ready.
      await waitFor(ready.what, () => {
        if (!child.isRunning()) throw new Error(`${spec.name} exited during start${logTail(logDir, spec.name)}`);
        return ready.check();
      }, timeoutMs);
      return child;
    },

    async runJob(spec) {
      const code = await startChild(spec.name, spec.command, spec.args, spec.env, logDir).exited;
      if (code !== 0) throw new Error(`${spec.name} failed (exit ${code})${logTail(logDir, spec.name)}`);
    },
  };
}
