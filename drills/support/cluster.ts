import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createDb, type Db } from '../../src/db/knex';
import { devServerExecutable } from '../../src/temporal/binaries';
import type { ChildProcessEntry } from '../../stack/child-process';
import { type DevCluster, startDevCluster } from '../../stack/dev-cluster';
import { staffLogin } from './platform-load';

const STAFF = { username: 'drill-staff', password: 'drill-staff-password-0123' };

/**
 * The dev-server cluster of stack/dev-cluster.ts as the drills drive it: the Temporal dev server on a state file (a
 * restart finds its workflows), the roles with the drill's settings, and the faults and backups the drills need.
 * Every process is the drill's child and stopped by its pid; the logs stay in `dir`.
 */
export interface DrillCluster extends DevCluster {
  startPostgres(): Promise<void>;
  /** Fast shutdown: sessions are terminated, as when the database server goes away. */
  stopPostgres(): Promise<void>;
  startTemporal(): Promise<void>;
  /** kill -9. */
  killTemporal(): Promise<void>;
  /** Runs the Temporal CLI against the drill's Temporal (`--address` added); answers its standard output. */
  temporalCli(args: string[]): Promise<string>;
  /** A new worker process (`worker-1`, `worker-2`, …). */
  startWorker(): Promise<ChildProcessEntry>;
  /** A new API process, once its port answers. */
  startApi(): Promise<ChildProcessEntry>;
  /** The relay: started, or started again. */
  startRelay(): Promise<ChildProcessEntry>;
  /**
   * A backup of the application's database taken now, under traffic: a copy named `name` (CREATE DATABASE …
   * TEMPLATE), for which connections to the database are cut for a moment (the services see a second-long outage).
   */
  snapshotDatabase(name: string): Promise<void>;
  /** Replaces the application's database by a copy of the backup `name`; the services using it must be stopped. */
  restoreDatabase(name: string): Promise<void>;
  /** A staff access token from the API. */
  staffToken(): Promise<string>;
}

/** `temporalDynamicConfig`: the drill's dynamic configuration of the dev server (`key=jsonValue` each). */
export async function startDrillCluster(name: string, { temporalDynamicConfig = [] }: { temporalDynamicConfig?: string[] } = {}): Promise<DrillCluster> {
  const cluster = await startDevCluster({
    folderPrefix: `drill-${name}-`,
    database: 'donations',
    staff: STAFF,
    env: {
      PATH: process.env.PATH,
      TEMPORAL_TASK_QUEUE: 'webhook-delivery',
      JWT_SECRET: 'drill-jwt-secret-of-at-least-thirty-two-characters',
      LOG_LEVEL: 'warn',
      // Development configuration: the drill's subscriber listens on loopback.
      ALLOW_INSECURE_WEBHOOK_URLS: 'true',
    },
    temporalStateFile: true,
    temporalDynamicConfig,
  });
  const { db, postgres, temporal, processes } = cluster;
  let workers = 0;
  let apis = 0;
  let relay: ChildProcessEntry | undefined;

  const cli = devServerExecutable();
  const temporalCli = async (args: string[]) => {
    if (cli.type !== 'existing-path') throw new Error('The Temporal CLI is missing: run `npm run tools` first');
    return (await promisify(execFile)(cli.path, [...args, '--address', temporal.address], { maxBuffer: 256 * 2 ** 20 })).stdout;
  };

  /** Runs `statements` as the superuser on the `postgres` database, with the drill's own pool closed meanwhile. */
  const administer = async (statements: (admin: Db) => Promise<void>) => {
    await db.destroy();
    const admin = createDb({ connectionString: postgres.connectionString('postgres'), pool: { max: 1 } });
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
    ...cluster,
    startPostgres: () => processes.start(postgres),
    stopPostgres: () => postgres.stop(),
    startTemporal: () => processes.start(temporal),
    killTemporal: () => temporal.stop('SIGKILL'),
    temporalCli,
    startWorker: () => cluster.startRole('worker', { name: `worker-${++workers}` }),
    startApi: () => cluster.startRole('api', { name: `api-${++apis}`, ready: { port: cluster.apiPort } }),
    async startRelay() {
      if (relay) await processes.start(relay);
      else relay = await cluster.startRole('relay');
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
    staffToken: () => staffLogin(cluster.apiUrl, STAFF),
  };
}
