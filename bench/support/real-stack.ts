import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { issueTokenPair, systemClock } from '../../src/auth/tokens';
import { verifyCredentials } from '../../src/auth/accounts';
import { createDb, type Db } from '../../src/db/knex';
import { portIsFree } from '../../src/shared/free-port';
import { allPorts, freePortPlan, planPorts, type PortPlan } from '../../stack/ports';
import type { ProcessSpec } from '../../stack/topology';
import { type RunningStack, startStack } from '../../stack/stack';
import { postgresBackendsByDatabase } from './processes';

/**
 * The stack as Compose runs it, but with tracing off (Compose exports every trace to Jaeger by default): the stack
 * figures in BENCHMARKS.md measure the service, and tracing's own cost is measured apart, side by side
 * (`bench/ceiling.ts`, `tracing=<ratio>`).
 */
export const UNTRACED = { OTEL_TRACES_EXPORTER: 'none', TEMPORAL_OTEL_TRACES_EXPORTER: 'none' };
import { configureBenchEndpoint, stopOnSignals } from './stack';

/** `--base-port` and `--membership-base-port` of the benchmarks on the stack (0: a free block, stack/ports.ts). */
export const realStackFlags = { 'base-port': 0, 'membership-base-port': 0 };

/** The report's `temporal` line for these benchmarks (machineInfo names the dev server's CLI, which they do not run). */
export const REAL_STACK_TEMPORAL = 'npm run stack: Temporal server as four services on the embedded Postgres (durable), mTLS; see docker-compose.yml for versions';

export interface RealStackOptions {
  ports: typeof realStackFlags;
  api: number;
  delivery: number;
  /** Postgres and Temporal only (the ceilings). */
  temporalOnly?: boolean;
  /** A bench variant of a process (stack/stack.ts, StackOptions.adjust). */
  adjust?: (spec: ProcessSpec) => ProcessSpec;
  /** Postgres settings over the stack's (stack/stack.ts, StackOptions.postgresSettings). */
  postgresSettings?: Record<string, string>;
  /** Variables docker-compose.yml reads from the shell, as `.env` would set them (`TEMPORAL_NUM_HISTORY_SHARDS`). */
  composeEnv?: Record<string, string>;
}

export interface RealStack {
  stack: RunningStack;
  /** The application's database (superuser), for the bench's own reads and its endpoint. */
  db: Db;
  /** Points the endpoint at the bench's subscriber, as bench/support/stack.ts does on the dev server. */
  configureEndpoint(url: string): Promise<void>;
  /** A fresh staff access token, signed as the API replicas sign them. */
  staffToken: () => string;
  /** Every process of the stack by name, and the bench's own, for CpuMeter. */
  processes(): Map<string, number>;
  /** The Postgres backends by database (`postgres[temporal]`, …), parts of `postgres` for CpuMeter. */
  postgresParts(): Map<string, number[]>;
  stop(): Promise<void>;
}

async function firstFree(base: number, plan: (basePort: number) => PortPlan): Promise<PortPlan> {
  for (let basePort = base; basePort < base + 500; basePort += 100) {
    const candidate = plan(basePort);
    if ((await Promise.all(allPorts(candidate).map(portIsFree))).every(Boolean)) return candidate;
  }
  throw new Error(`no free block of ports from ${base} to ${base + 499}`);
}

/**
 * The production-like stack of `npm run stack` (stack/stack.ts: Temporal as four services on Postgres, mTLS, API and
 * delivery replicas behind Caddy), started afresh in a folder of its own for one benchmark run and removed after.
 */
export async function startRealStack(options: RealStackOptions): Promise<RealStack> {
  const layout = { api: options.api, delivery: options.delivery, history: 1 };
  const base = options.ports['base-port'];
  // A given base in the kernel's range for outgoing connections may find one of its ports held by one for a while:
  // the next block of 100 then (the membership ports, below that range, stay).
  const free = base ? await firstFree(base, (basePort) => planPorts({ basePort, membershipBasePort: options.ports['membership-base-port'] || undefined, ...layout })) : undefined;
  const ports = free ?? (await freePortPlan(layout));
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'donation-webhooks-bench-stack-'));
  // As root, Postgres runs as the `postgres` user, which must be able to reach its data directory.
  await chmod(dataDir, 0o755);
  let stack: RunningStack | undefined;
  let db: Db | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await removeSignalHandlers();
      await db?.destroy();
      await stack?.stop();
      await rm(dataDir, { recursive: true, force: true });
    })());
  const removeSignalHandlers = stopOnSignals(stop);
  try {
    stack = await startStack({
      dataDir,
      ports,
      tls: true,
      shellEnv: { ...UNTRACED, ...options.composeEnv },
      log: () => undefined,
      temporalOnly: options.temporalOnly,
      adjust: options.adjust,
      postgresSettings: options.postgresSettings,
    });
    const running = stack;
    db = createDb({ connectionString: running.postgresUrl('donations'), pool: { max: 2 } });
    const staff = options.temporalOnly ? undefined : await verifyCredentials(db, running.staff.username, running.staff.password);
    const bench = db;
    return {
      stack: running,
      db: bench,
      configureEndpoint: (url) => configureBenchEndpoint(bench, url, running.appEnv.SECRETS_KEYS),
      staffToken: () => {
        if (!staff) throw new Error('the stack runs no application (temporalOnly)');
        return issueTokenPair({ secrets: running.appEnv.JWT_SECRETS.split(','), clock: systemClock, sessionMaxSeconds: 86_400 }, staff).access;
      },
      processes: () => new Map([...running.processes(), ['bench', process.pid]]),
      postgresParts: () => postgresBackendsByDatabase(running.processes().get('postgres')!),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
