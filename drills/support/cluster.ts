import { execFile } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { upsertUser } from '../../src/auth/accounts';
import { projectRoot } from '../../src/config';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { createDb, type Db, migrateToLatest } from '../../src/db/knex';
import { DEV_SERVER_ARGS } from '../../src/temporal/dev-server';
import { freePort } from '../../test/support/free-port';
import { staffLogin } from './platform-load';
import { type Child, portAnswers, startChild, startRole, waitFor } from './processes';

export const TEMPORAL_CLI = path.join(projectRoot, '.tools', 'venv', 'bin', 'temporal');
const STAFF = { username: 'drill-staff', password: 'drill-staff-password-0123' };

/**
 * The whole service as separate real processes on loopback, for fault drills: an embedded Postgres the drill can
 * stop and start, the Temporal dev server (file-backed, so a restart keeps its state), and the API, relay and
 * worker roles of dist/src/main.js. Every process is the drill's child and stopped by its pid.
 */
export interface DrillCluster {
  dir: string;
  db: Db;
  apiUrl: string;
  /** The environment every role of the cluster gets (database, Temporal, development rules). */
  env: NodeJS.ProcessEnv;
  startPostgres(): Promise<void>;
  /** Fast shutdown (SIGINT): sessions are terminated, as when the database server goes away. */
  stopPostgres(): Promise<void>;
  startTemporal(): Promise<void>;
  killTemporal(): Promise<void>;
  /** Runs the Temporal CLI against the drill's Temporal (`--address` added); answers its standard output. */
  temporalCli(args: string[]): Promise<string>;
  startWorker(): Promise<Child>;
  startApi(): Promise<Child>;
  startRelay(): Child;
  /**
   * A backup of the application's database taken now, under traffic: a copy named `name` (CREATE DATABASE …
   * TEMPLATE), for which connections to the database are cut for a moment (the services see a second-long outage).
   */
  snapshotDatabase(name: string): Promise<void>;
  /** Replaces the application's database by a copy of the backup `name`; the services using it must be stopped. */
  restoreDatabase(name: string): Promise<void>;
  /** A staff access token from the API. */
  staffToken(): Promise<string>;
  /** Stops every process; the databases are deleted, the processes' logs stay in `dir`. */
  shutdown(): Promise<void>;
}

/** `temporalArgs`: more `temporal server start-dev` arguments (a drill's dynamic configuration). */
export async function startDrillCluster(name: string, { temporalArgs = [] }: { temporalArgs?: string[] } = {}): Promise<DrillCluster> {
  const dir = await mkdtemp(path.join(os.tmpdir(), `drill-${name}-`));
  // As root, Postgres runs as the `postgres` user, which must be able to reach its data directory.
  await chmod(dir, 0o755);
  const [pgPort, temporalPort, apiPort] = await Promise.all([freePort(), freePort(), freePort()]);
  let postgres: EmbeddedPostgresHandle | undefined;
  let temporal: Child | undefined;
  const children: Child[] = [];
  let workers = 0;
  let apis = 0;

  const startPostgres = async () => {
    // Drills stop processes, never the machine: what fsync would add survives them in the page cache anyway.
    postgres = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), port: pgPort, persistent: true, durable: false });
  };
  await startPostgres();
  await postgres!.createDatabase('donations');
  const databaseUrl = postgres!.connectionString('donations');
  const db = createDb({ connectionString: databaseUrl, pool: { max: 5 } });
  await migrateToLatest(db);
  await upsertUser(db, { ...STAFF, isStaff: true });

  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: `127.0.0.1:${temporalPort}`,
    TEMPORAL_TASK_QUEUE: 'webhook-delivery',
    JWT_SECRET: 'drill-jwt-secret-of-at-least-thirty-two-characters',
    HOST: '127.0.0.1',
    PORT: String(apiPort),
    LOG_LEVEL: 'warn',
    // Development configuration: the drill's subscriber listens on loopback.
    ALLOW_INSECURE_WEBHOOK_URLS: 'true',
  };
  const apiUrl = `http://127.0.0.1:${apiPort}`;

  const temporalCli = async (args: string[]) =>
    (await promisify(execFile)(TEMPORAL_CLI, [...args, '--address', `127.0.0.1:${temporalPort}`], { maxBuffer: 256 * 2 ** 20 })).stdout;
  const temporalHealthy = async () => {
    try {
      await temporalCli(['operator', 'cluster', 'health']);
      return true;
    } catch {
      return false;
    }
  };

  /** Runs `statements` as the superuser on the `postgres` database, with the drill's own pool closed meanwhile. */
  const administer = async (statements: (admin: Db) => Promise<void>) => {
    await db.destroy();
    const admin = createDb({ connectionString: postgres!.connectionString('postgres'), pool: { max: 1 } });
    try {
      await statements(admin);
    } finally {
      await admin.destroy();
      db.initialize();
    }
  };
  const cutConnections = (admin: Db) =>
    admin.raw(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'donations' AND pid <> pg_backend_pid()`);

  return {
    dir,
    db,
    apiUrl,
    env,
    startPostgres,
    async stopPostgres() {
      await postgres?.stop();
      postgres = undefined;
    },
    async startTemporal() {
      temporal = startChild(
        'temporal',
        TEMPORAL_CLI,
        ['server', 'start-dev', '--ip', '127.0.0.1', '--port', String(temporalPort), '--headless', '--log-level', 'warn',
          '--db-filename', path.join(dir, 'temporal.sqlite'), '--namespace', 'default', ...DEV_SERVER_ARGS, ...temporalArgs],
        env,
        dir,
      );
      await waitFor('the Temporal dev server', temporalHealthy, 60_000);
    },
    async killTemporal() {
      await temporal?.kill('SIGKILL');
    },
    async startWorker() {
      const worker = startRole('worker', `worker-${++workers}`, env, dir);
      children.push(worker);
      return worker;
    },
    temporalCli,
    async startApi() {
      const api = startRole('api', `api-${++apis}`, env, dir);
      children.push(api);
      await waitFor('the API', () => portAnswers(apiPort), 30_000);
      return api;
    },
    startRelay() {
      const relay = startRole('relay', 'relay', env, dir);
      children.push(relay);
      return relay;
    },
    async snapshotDatabase(name) {
      await administer(async (admin) => {
        await admin.raw('ALTER DATABASE donations ALLOW_CONNECTIONS false');
        try {
          await cutConnections(admin);
          // CREATE DATABASE waits a few seconds for the cut sessions to end.
          await admin.raw(`CREATE DATABASE ${name} TEMPLATE donations`);
        } finally {
          await admin.raw('ALTER DATABASE donations ALLOW_CONNECTIONS true');
        }
      });
    },
    async restoreDatabase(name) {
      await administer(async (admin) => {
        await cutConnections(admin);
        await admin.raw('DROP DATABASE donations');
        await admin.raw(`CREATE DATABASE donations TEMPLATE ${name}`);
      });
    },
    staffToken: () => staffLogin(apiUrl, STAFF),
    async shutdown() {
      for (const child of children.reverse()) await child.kill('SIGTERM');
      await temporal?.kill('SIGTERM');
      await db.destroy();
      await postgres?.stop();
      await rm(path.join(dir, 'pg'), { recursive: true, force: true });
      for (const file of ['temporal.sqlite', 'temporal.sqlite-journal', 'temporal.sqlite-wal', 'temporal.sqlite-shm']) {
        await rm(path.join(dir, file), { force: true });
      }
    },
  };
}
