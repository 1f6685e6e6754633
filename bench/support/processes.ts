import { readdirSync, readFileSync } from 'node:fs';

const CLOCK_TICKS_PER_SECOND = 100;

function readStatus(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
}

const statusField = (status: string | undefined, name: string) => {
  const match = status?.match(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm'));
  return match ? Number(match[1]) / 1024 : 0;
};

/** Resident memory now and its peak (VmHWM) over the process's life, in MiB. */
export function memoryOf(pid: number): { rssMb: number; peakRssMb: number } {
  const status = readStatus(pid);
  return { rssMb: statusField(status, 'VmRSS'), peakRssMb: statusField(status, 'VmHWM') };
}

/**
 * Proportional set size of some processes together, in MiB: each shared page counted once over all who map it.
 * Summing RSS over Postgres's backends would count its shared buffers once per backend.
 */
export function proportionalSetMb(pids: number[]): number {
  let kilobytes = 0;
  for (const pid of pids) {
    try {
      kilobytes += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // exited meanwhile
    }
  }
  return kilobytes / 1024;
}

/** The process and all its descendants (Postgres backends, the Temporal server's children). */
export function processTree(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parentOf.set(Number(entry), Number(fields[1]));
    } catch {
      // exited meanwhile
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) {
    for (const [pid, parent] of parentOf) if (parent === tree[i]) tree.push(pid);
  }
  return tree;
}

/** The processes of a process group (a command started detached, with everything it started). */
export function processGroup(groupId: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === groupId) members.push(Number(entry));
    } catch {
      // exited meanwhile
    }
  }
  return members;
}

/** CPU seconds (user + system, including reaped children) used so far by a process tree. */
export function cpuSecondsOf(root: number): number {
  let ticks = 0;
  for (const pid of processTree(root)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // Fields 14-17 of /proc/<pid>/stat (utime, stime, cutime, cstime), here shifted by the two before ')'.
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    } catch {
      // exited meanwhile
    }
  }
  return ticks / CLOCK_TICKS_PER_SECOND;
}

/** Samples one process's RSS a few times a second; `peak` is the largest sample since start or the last reset. */
export class MemorySampler {
  private timer: NodeJS.Timeout;
  peakMb = 0;
  samples = 0;

  constructor(private readonly pid: number, intervalMs = 250) {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
    this.sample();
  }

  sample(): number {
    const { rssMb } = memoryOf(this.pid);
    this.samples += 1;
    this.peakMb = Math.max(this.peakMb, rssMb);
    return rssMb;
  }

  reset(): void {
    this.peakMb = 0;
    this.sample();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

/** CPU seconds (user + system) of one process alone, without its children; undefined once it has exited. */
function ownCpuSeconds(pid: number, statFile = `/proc/${pid}/stat`): number | undefined {
  try {
    const stat = readFileSync(statFile, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/**
 * The backends of a Postgres cluster by the database they serve, as Postgres names them in their process titles
 * (`postgres: temporal temporal_visibility 127.0.0.1(51234) idle`), as parts `postgres[<database>]` for CpuMeter.
 */
export function postgresBackendsByDatabase(postmaster: number): Map<string, number[]> {
  const parts = new Map<string, number[]>();
  for (const pid of processTree(postmaster).slice(1)) {
    let title: string;
    try {
      title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
    } catch {
      continue;
    }
    const database = /^postgres: \S+ (\S+) (?:[\d.:a-f]+\(\d+\)|\[local\])/.exec(title)?.[1];
    if (!database) continue;
    const name = `postgres[${database}]`;
    parts.set(name, [...(parts.get(name) ?? []), pid]);
  }
  return parts;
}

/** CPU seconds of each thread of one process, by thread id (empty once it has exited). */
function threadCpuSeconds(pid: number): Map<number, number> {
  const threads = new Map<number, number>();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      const seconds = ownCpuSeconds(Number(tid), `/proc/${pid}/task/${tid}/stat`);
      if (seconds !== undefined) threads.set(Number(tid), seconds);
    }
  } catch {
    // exited meanwhile
  }
  return threads;
}

/**
 * CPU used by each named process tree between two moments, as cores busy (1.0 = one core all the time); and by
 * `parts`, groups of single processes inside one of the trees (found again at the end: a process that started
 * meanwhile counts whole, one that exited is lost), which are shown beside their tree, not added to it. For the
 * processes named in `busiestThreadOf`, also their busiest thread as the part `<name>[busiest thread]`: a stage that
 * runs on one thread (a Node process's event loop, its workflow thread) bounds the process at one core of it, however
 * many cores are free.
 */
export class CpuMeter {
  private start: Map<string, number>;
  private startOfParts: Map<string, Map<number, number>>;
  private startOfThreads: Map<string, Map<number, number>>;
  private startedAt = performance.now();

  constructor(
    private readonly roots: ReadonlyMap<string, number>,
    private readonly parts: () => ReadonlyMap<string, number[]> = () => new Map(),
    private readonly busiestThreadOf: readonly string[] = [],
  ) {
    this.start = this.read();
    this.startOfParts = this.readParts();
    this.startOfThreads = this.readThreads();
  }

  private readThreads(): Map<string, Map<number, number>> {
    return new Map(this.busiestThreadOf.flatMap((name) => (this.roots.has(name) ? [[name, threadCpuSeconds(this.roots.get(name)!)] as const] : [])));
  }

  private readParts(): Map<string, Map<number, number>> {
    return new Map(
      [...this.parts()].map(([name, pids]) => [name, new Map(pids.map((pid) => [pid, ownCpuSeconds(pid) ?? 0] as [number, number]))]),
    );
  }

  private read(): Map<string, number> {
    // The bench process is the parent of everything else: count only itself.
    const own = () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1e6;
    };
    return new Map([...this.roots].map(([name, pid]) => [name, pid === process.pid ? own() : cpuSecondsOf(pid)]));
  }

  /** CPU seconds and cores used per process tree, and per part, since construction. */
  used(): Record<string, { seconds: number; cores: number }> {
    const elapsedS = (performance.now() - this.startedAt) / 1000;
    const now = this.read();
    const trees = [...this.roots.keys()].map((name) => [name, (now.get(name) ?? 0) - (this.start.get(name) ?? 0)] as const);
    const parts = [...this.readParts()].map(([name, pids]) => {
      const before = this.startOfParts.get(name);
      return [name, [...pids].reduce((sum, [pid, seconds]) => sum + seconds - (before?.get(pid) ?? 0), 0)] as const;
    });
    const threads = [...this.readThreads()].map(([name, now]) => {
      const before = this.startOfThreads.get(name);
      return [`${name}[busiest thread]`, Math.max(0, ...[...now].map(([tid, seconds]) => seconds - (before?.get(tid) ?? 0)))] as const;
    });
    return Object.fromEntries([...trees, ...parts, ...threads].map(([name, seconds]) => [name, { seconds, cores: seconds / elapsedS }]));
  }
}

/**
 * What `untilCalm` waits for: the processes together below `cores` in `windows` windows of `windowS` in a row;
 * `timeoutS` at most.
 */
export interface Calm {
  cores: number;
  windowS: number;
  windows: number;
  timeoutS: number;
}

/**
 * Waits until the measured processes (the bench's own and the per-thread figures left out) use less than `cores`
 * together in `windows` windows in a row, or `timeoutS` passed; answers the seconds waited and whether it was calm.
 * What a probe leaves behind once its events have arrived (workflows completing, Temporal's visibility and history
 * tasks, Postgres's vacuum) is then worked off before the next probe, which would otherwise pay for it. Work that is
 * only scheduled (a retry's timer) uses no CPU yet and is not waited for.
 */
export async function untilCalm(meter: () => Pick<CpuMeter, 'used'>, { cores, windowS, windows, timeoutS }: Calm): Promise<{ waitedS: number; calm: boolean }> {
  const started = performance.now();
  const waitedS = () => (performance.now() - started) / 1000;
  let calmWindows = 0;
  while (calmWindows < windows && waitedS() < timeoutS) {
    const window = meter();
    await new Promise((resolve) => setTimeout(resolve, windowS * 1000));
    const busy = Object.entries(window.used())
      .filter(([name]) => name !== 'bench' && !name.includes('['))
      .reduce((sum, [, used]) => sum + used.cores, 0);
    calmWindows = busy < cores ? calmWindows + 1 : 0;
  }
  return { waitedS: waitedS(), calm: calmWindows >= windows };
}
