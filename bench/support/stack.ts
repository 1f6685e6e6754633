import { cp, rm } from 'node:fs/promises';
import path from 'node:path';
import { issueTokenPair, systemClock } from '../../src/auth/tokens';
import type { Db } from '../../src/db/knex';
import { createKeyring, parseSecretsKeys } from '../../src/secrets/keyring';
import type { WorkerTuning } from '../../src/temporal/worker';
import { saveEndpoint } from '../../src/webhook-endpoint/endpoint-store';
import type { ChildProcessEntry } from '../../stack/child-process';
import { type DevCluster, type Role, startDevCluster } from '../../stack/dev-cluster';
import type { DevServerProcess } from '../../stack/dev-server-process';
import type { RelayTuning } from './traced-relay';

const JWT_SECRET = 'bench-secret-of-at-least-thirty-two-characters';
/** The key the roles open the endpoint's secrets with, and the stack seals them with. */
const SECRETS_KEYS = 'b'.repeat(64);
const STAFF = { username: 'bench', password: 'bench-password' };

/** The roles a benchmark runs. */
export type BenchRole = Exclude<Role, 'migrate'>;

/** The log line each role writes when it is ready (src/main.ts). */
const READY_MESSAGE: Record<BenchRole, string> = {
  all: 'Ready in',
  api: '"msg":"API listening"',
  worker: '"msg":"delivery worker running"',
  relay: '"msg":"outbox relay running"',
  delivery: '"msg":"delivery worker and outbox relay running"',
};

export interface StackOptions {
  roles: BenchRole[];
  /** Extra environment for every service process. */
  env?: Record<string, string>;
  /** Extra node options per role, e.g. `{ worker: ['--trace-gc'] }`. */
  nodeArgs?: Partial<Record<BenchRole, string[]>>;
  /** Roles started with `node --cpu-prof`; their profiles are written to `<dir>/<role>/` when they stop. */
  cpuProfile?: { roles: BenchRole[]; dir: string };
  /** `key=jsonValue` dynamic config of the Temporal dev server. */
  temporalDynamicConfig?: string[];
  /** Load pg_stat_statements into Postgres. */
  pgStatStatements?: boolean;
  /** The built checkout whose service to run; default this one. */
  serviceRoot?: string;
  /** Without the Temporal dev server (the read API needs none): TEMPORAL_ADDRESS then names a closed port. */
  withoutTemporal?: boolean;
  /** Copy the services' and Temporal's logs here when the stack stops (it deletes its folder). */
  keepLogsIn?: string;
  /** Runs after the migrations, before the services start (bulk data). */
  prepare?: (db: Db) => Promise<void>;
  /** Runs the worker as support/tuned-worker.ts with these poller and slot settings (`{}`: the defaults). */
  workerTuning?: WorkerTuning;
  /** Runs the relay as support/traced-relay.ts, its workflow starts timed into `traceFile`, with these relay options. */
  relayProbe?: { traceFile: string; tuning: RelayTuning };
}

export interface Stack {
  dir: string;
  db: Db;
  databaseUrl: string;
  /** Unless `withoutTemporal`. */
  temporal?: DevServerProcess;
  services: Map<BenchRole, ChildProcessEntry>;
  apiUrl: string;
  /** A fresh staff access token (they live five minutes). */
  staffToken: () => string;
  /** Points the platform's webhook endpoint at `url` (v2.1, all donation events, basic auth). */
  configureEndpoint(url: string): Promise<void>;
  /** The stack's processes by name, for CpuMeter: each role, `postgres`, and `temporal` where it runs. */
  processes(): Map<string, number>;
  stop(): Promise<void>;
}

/** The stops of the stacks running now: a signal waits for all of them (the `floor` system runs two at once). */
const runningStops = new Set<() => Promise<void>>();
const SIGNALS = ['SIGINT', 'SIGTERM'] as const;
const onSignal = () => void Promise.allSettled([...runningStops].map((stop) => stop())).then(() => process.exit(130));

/**
 * Ctrl-C (or SIGTERM) runs `stop` first, so that it leaves no Postgres, Temporal or service process behind; with
 * several stacks running, the process exits once every one has stopped. Returns what removes `stop` again, for a
 * benchmark that starts one stack after another.
 */
export function stopOnSignals(stop: () => Promise<void>): () => Promise<void> {
  if (runningStops.size === 0) for (const signal of SIGNALS) process.once(signal, onSignal);
  runningStops.add(stop);
  return async () => {
    runningStops.delete(stop);
    if (runningStops.size === 0) for (const signal of SIGNALS) process.off(signal, onSignal);
  };
}

/**
 * Points the platform's webhook endpoint at the bench's subscriber (v2.1, all donation events, basic auth), its
 * secrets sealed with `secretsKeys` (SECRETS_KEYS of the service under test).
 */
export async function configureBenchEndpoint(db: Db, url: string, secretsKeys: string): Promise<void> {
  await saveEndpoint(
    db,
    {
      url,
      active: true,
      payload_version: 'v2.1',
      events: ['donation.completed', 'donation.recurring_completed', 'donation.reconciled', 'shop_order.completed'],
      basic_auth_username: 'crm',
      basic_auth_password: 'bench-subscriber-password',
      signing_secret: null,
    },
    new Date(),
    createKeyring(parseSecretsKeys(secretsKeys)),
  );
}

/** The bench's own entry for a role when the options ask for one (settings or probes the roles do not offer). */
function benchVariant(role: BenchRole, options: StackOptions): { path: string; args: string[] } | undefined {
  const script = (name: string, args: string[]) => {
    if (options.serviceRoot) throw new Error(`--service-root cannot be combined with the bench's own ${role} (${name})`);
    return { path: path.join(__dirname, `${name}.js`), args };
  };
  if (role === 'worker' && options.workerTuning) return script('tuned-worker', [JSON.stringify(options.workerTuning)]);
  if (role === 'relay' && options.relayProbe) return script('traced-relay', [options.relayProbe.traceFile, JSON.stringify(options.relayProbe.tuning)]);
  return undefined;
}

/**
 * The service under test as in production, on one machine (stack/dev-cluster.ts): Postgres, the Temporal dev server
 * (in memory), and the built service roles as separate processes pointed at both, started one after the other
 * (start-up is CPU heavy on two cores), each once it logs that it is ready.
 */
export async function startStack(options: StackOptions): Promise<Stack> {
  let cluster: DevCluster | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await removeSignalHandlers();
      if (!cluster) return;
      await cluster.stop().catch(() => undefined);
      if (options.keepLogsIn) await cp(cluster.dir, options.keepLogsIn, { recursive: true });
      await rm(cluster.dir, { recursive: true, force: true });
    })());
  const removeSignalHandlers = stopOnSignals(stop);
  try {
    cluster = await startDevCluster({
      folderPrefix: 'donation-webhooks-bench-',
      database: 'bench',
      staff: STAFF,
      env: {
        ...process.env,
        NODE_ENV: 'development',
        JWT_SECRET,
        SECRETS_KEYS,
        SEED_DEMO_DATA: 'false',
        LOG_LEVEL: 'info',
        ...options.env,
      },
      // As in every benchmark so far: what is measured is the service, not the disk's flushes (not durable).
      postgresSettings: options.pgStatStatements ? { shared_preload_libraries: 'pg_stat_statements' } : undefined,
      temporalDynamicConfig: options.temporalDynamicConfig,
      prepare: async (db) => {
        if (options.pgStatStatements) await db.raw('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
        await options.prepare?.(db);
      },
    });
    const running = cluster;
    if (!options.withoutTemporal) await running.processes.start(running.temporal);
    const services = new Map<BenchRole, ChildProcessEntry>();
    for (const role of options.roles) {
      const profile = options.cpuProfile?.roles.includes(role) ? options.cpuProfile : undefined;
      const service = await running.startRole(role, {
        ready: { logLine: READY_MESSAGE[role] },
        nodeArgs: [...(options.nodeArgs?.[role] ?? []), ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profile.dir, role)}`] : [])],
        root: options.serviceRoot,
        script: benchVariant(role, options),
      });
      services.set(role, service);
    }
    return {
      dir: running.dir,
      db: running.db,
      databaseUrl: running.databaseUrl,
      temporal: options.withoutTemporal ? undefined : running.temporal,
      services,
      apiUrl: running.apiUrl,
      staffToken: () => issueTokenPair({ secrets: [JWT_SECRET], clock: systemClock, sessionMaxSeconds: 86_400 }, running.staff).access,
      configureEndpoint: (url) => configureBenchEndpoint(running.db, url, SECRETS_KEYS),
      processes: () => running.processes.pids(),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
