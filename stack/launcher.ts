import { isRunning, type StackProcess } from './process';

/** One step of a topology: a process, or several started together (none of which needs another). */
export type Step = StackProcess | readonly StackProcess[];

/**
 * The processes of a topology in the order of their first start. Each step is ready before the next starts; stop()
 * stops them in reverse, so that whatever relies on a process stops before it.
 */
export interface Launcher {
  /** Starts each step in order (a process started before starts again, in its place), each ready before the next. */
  start(...steps: Step[]): Promise<void>;
  /** A process started before, by name. */
  get(name: string): StackProcess;
  /** Every process that runs now, by name: its pid. */
  pids(): Map<string, number>;
  /** Stops every process in the reverse order of their first start; a second call waits for the first. */
  stop(): Promise<void>;
}

/** `log` hears each process stopped by stop(), with how long it took, and each failure to stop one. */
export function launcher(log: (line: string) => void = () => undefined): Launcher {
  const started: StackProcess[] = [];
  let stopping: Promise<void> | undefined;
  const get = (name: string) => {
    const found = started.find((entry) => entry.name === name);
    if (!found) throw new Error(`no process ${name} was started`);
    return found;
  };
  return {
    async start(...steps) {
      for (const step of steps) {
        const together = Array.isArray(step) ? step : [step as StackProcess];
        for (const entry of together) {
          if (stopping) throw new Error(`${entry.name} not started: the processes are stopping`);
          if (started.includes(entry)) continue;
          if (started.some(({ name }) => name === entry.name)) throw new Error(`a process named ${entry.name} was started before`);
          // Listed before it starts, so that one that fails to become ready is stopped too.
          started.push(entry);
        }
        await Promise.all(together.map(async (entry) => {
          await entry.start();
          await entry.ready();
        }));
      }
    },
    get,
    pids: () => new Map(started.flatMap((entry) => {
      const pid = entry.pid();
      return pid === undefined ? [] : [[entry.name, pid] as [string, number]];
    })),
    stop: () =>
      (stopping ??= (async () => {
        for (const entry of [...started].reverse()) {
          if (!isRunning(entry)) continue;
          const since = Date.now();
          await entry.stop().catch((err: unknown) => log(`while stopping ${entry.name}: ${(err as Error).message}`));
          log(`  stopped ${entry.name} (${((Date.now() - since) / 1000).toFixed(1)} s)`);
        }
      })()),
  };
}
