import { chmod, cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { issueTokenPair, systemClock } from '../../src/auth/tokens';
import { upsertUser } from '../../src/auth/accounts';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { createDb, type Db, migrateToLatest } from '../../src/db/knex';
import { createKeyring, parseSecretsKeys } from '../../src/secrets/keyring';
import { saveEndpoint } from '../../src/webhook-endpoint/endpoint-store';
import { freePort } from '../../test/support/free-port';
import type { WorkerTuning } from '../../src/temporal/worker';
import { type Role, type ServiceProcess, startService } from './service-process';
import type { RelayTuning } from './traced-relay';
import { startTemporalDevServer, type TemporalDevServer } from './temporal-dev-server';

const JWT_SECRET = 'bench-secret-of-at-least-thirty-two-characters';
/** The key the roles open the endpoint's secrets with, and the stack seals them with. */
const SECRETS_KEYS = 'b'.repeat(64);
const STAFF = { username: 'bench', password: 'bench-password', isStaff: true };

export interface StackOptions {
  roles: Role[];
  /** Extra environment for every service process. */
  env?: Record<string, string>;
  /** Extra node options per role, e.g. `{ worker: ['--trace-gc'] }`. */
  nodeArgs?: Partial<Record<Role, string[]>>;
  /** Roles started with `node --cpu-prof`; their profiles are written to `<dir>/<role>/` when they stop. */
  cpuProfile?: { roles: Role[]; dir: string };
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
  temporal?: TemporalDevServer;
  services: Map<Role, ServiceProcess>;
  apiUrl: string;
  /** A fresh staff access token (they live five minutes). */
  staffToken: () => string;
  /** Points the platform's webhook endpoint at `url` (v2.1, all donation events, basic auth). */
  configureEndpoint(url: string): Promise<void>;
  /** The stack's processes by name, for CpuMeter: each role, `postgres`, and `temporal` where it runs. */
  processes(): Map<string, number>;
  stop(): Promise<void>;
}

/**
 * Ctrl-C (or SIGTERM) runs `stop` first, so that it leaves no Postgres, Temporal or service process behind. Returns
 * what removes the handlers again, for a benchmark that starts one stack after another.
 */
export function stopOnSignals(stop: () => Promise<void>): () => Promise<void> {
  const onSignal = () => void stop().then(() => process.exit(130));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, onSignal);
  return async () => {
    for (const signal of ['SIGINT', 'SIGTERM'] as const) process.off(signal, onSignal);
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

/** The postmaster's pid, from its pid file (first line). */
export async function postmasterPid(dataDir: string): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  return Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

/** The bench's own entry for a role when the options ask for one (settings or probes the roles do not offer). */
function benchVariant(role: Role, options: StackOptions): { path: string; args: string[] } | undefined {
  const script = (name: string, args: string[]) => {
    if (options.serviceRoot) throw new Error(`--service-root cannot be combined with the bench's own ${role} (${name})`);
    return { path: path.join(__dirname, `${name}.js`), args };
  };
  if (role === 'worker' && options.workerTuning) return script('tuned-worker', [JSON.stringify(options.workerTuning)]);
  if (role === 'relay' && options.relayProbe) return script('traced-relay', [options.relayProbe.traceFile, JSON.stringify(options.relayProbe.tuning)]);
  return undefined;
}

/**
 * The service under test as in production, on one machine: Postgres (embedded, own port, temp dir), the Temporal dev
 * server (in memory), and the built service roles as separate processes pointed at both.
 */
export async function startStack(options: StackOptions): Promise<Stack> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'donation-webhooks-bench-'));
  await chmod(dir, 0o755); // Postgres runs as `postgres` when we are root
  const stops: Array<() => Promise<void>> = [];
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      for (const step of stops.reverse()) await step().catch(() => undefined);
      if (options.keepLogsIn) await cp(dir, options.keepLogsIn, { recursive: true, filter: (file) => !file.includes(`${path.sep}pg`) });
      await rm(dir, { recursive: true, force: true });
    })());
  stops.push(stopOnSignals(stop));
  try {
    const pgDataDir = path.join(dir, 'pg');
    const postgres: EmbeddedPostgresHandle = await startEmbeddedPostgres({
      dataDir: pgDataDir,
      port: await freePort(),
      persistent: false,
      // As in every benchmark so far: what is measured is the service, not the disk's flushes.
      durable: false,
      settings: options.pgStatStatements ? { shared_preload_libraries: 'pg_stat_statements' } : undefined,
    });
    stops.push(() => postgres.stop());
    await postgres.createDatabase('bench');
    const databaseUrl = postgres.connectionString('bench');
    const db = createDb({ connectionString: databaseUrl, pool: { max: 4 } });
    stops.push(() => db.destroy());
    await migrateToLatest(db);
    if (options.pgStatStatements) await db.raw('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const staff = await upsertUser(db, STAFF);
    await options.prepare?.(db);

    let temporal: TemporalDevServer | undefined;
    if (!options.withoutTemporal) {
      const server = await startTemporalDevServer(path.join(dir, 'temporal.log'), options.temporalDynamicConfig);
      stops.push(() => server.stop());
      temporal = server;
    }

    const apiPort = await freePort();
    const env = {
      NODE_ENV: 'development',
      DATABASE_URL: databaseUrl,
      // The client connects lazily: a closed port is fine for a role that never calls Temporal.
      TEMPORAL_ADDRESS: temporal?.address ?? `127.0.0.1:${await freePort()}`,
      JWT_SECRET,
      SECRETS_KEYS,
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      SEED_DEMO_DATA: 'false',
      LOG_LEVEL: 'info',
      ...options.env,
    };
    const services = new Map<Role, ServiceProcess>();
    // One after the other: start-up bundles workflows and is CPU heavy on two cores.
    for (const role of options.roles) {
      const profile = options.cpuProfile?.roles.includes(role) ? options.cpuProfile : undefined;
      const nodeArgs = [
        ...(options.nodeArgs?.[role] ?? []),
        ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${path.join(profile.dir, role)}`] : []),
      ];
      const service = await startService(role, {
        env,
        logFile: path.join(dir, `${role}.log`),
        nodeArgs,
        root: options.serviceRoot,
        script: benchVariant(role, options),
      });
      services.set(role, service);
      stops.push(() => service.stop());
    }

    const postgresPid = await postmasterPid(pgDataDir);
    return {
      dir,
      db,
      databaseUrl,
      temporal,
      services,
      apiUrl: `http://127.0.0.1:${apiPort}`,
      staffToken: () => issueTokenPair({ secrets: [JWT_SECRET], clock: systemClock, sessionMaxSeconds: 86_400 }, staff).access,
      configureEndpoint: (url) => configureBenchEndpoint(db, url, SECRETS_KEYS),
      processes: () =>
        new Map<string, number>([
          ...[...services].map(([role, service]) => [role, service.pid] as [string, number]),
          ['postgres', postgresPid],
          ...(temporal ? [['temporal', temporal.pid] as [string, number]] : []),
        ]),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
