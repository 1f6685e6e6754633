/**
 * One process of a topology, whatever it runs: Postgres, a Temporal server, a role of dist/src/main.js, Caddy, a
 * one-off job. A topology is a list of them, started in order and stopped in reverse (stack/launcher.ts).
 */
export interface StackProcess {
  /** Its name in the topology, its log's and in `pids()`: `postgres`, `temporal-history`, `api-1`. */
  readonly name: string;
  /** The file its output goes to. */
  readonly log: string;
  /** Starts it (a one-off job: runs it to its end, and fails unless it succeeded); fails when it runs already. */
  start(): Promise<void>;
  /** Resolves once it serves (its port or URL answers, or its log says so); fails when it ends first or takes too long. */
  ready(): Promise<void>;
  /**
   * Stops it and resolves once it has ended; nothing when it does not run. SIGTERM gives it its grace period, then
   * SIGKILL; SIGKILL is at once.
   */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Its process id while it runs (Postgres: the postmaster's). */
  pid(): number | undefined;
}

export const isRunning = (process: StackProcess): boolean => process.pid() !== undefined;

/** The pid of a process that must run now (a benchmark reads its CPU and memory). */
export function pidOf(process: StackProcess): number {
  const pid = process.pid();
  if (pid === undefined) throw new Error(`${process.name} does not run`);
  return pid;
}
