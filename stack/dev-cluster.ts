import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { upsertUser } from '../src/auth/accounts';
import { projectRoot } from '../src/config';
import { embeddedPasswordFile } from '../src/db/embedded-credentials';
import { createDb, type Db, migrateToLatest } from '../src/db/knex';
import { freePort } from '../src/shared/free-port';
import type { User } from '../src/users/user-store';
import { type ChildProcessEntry, childProcess, type Readiness } from './child-process';
import { type DevServerProcess, devServerProcess } from './dev-server-process';
import { type Launcher, launcher } from './launcher';
import { type PostgresProcess, postgresProcess } from './postgres-process';

export type Role = 'all' | 'api' | 'worker' | 'relay' | 'delivery' | 'migrate';

export interface DevClusterOptions {
  /** Its folder's name in the system's temporary folder begins so: `drill-worker-kill-`. */
  folderPrefix: string;
  /** The application's database. */
  database: string;
  /** A staff user created once the migrations ran. */
  staff: { username: string; password: string };
  /** The roles' environment; the cluster sets DATABASE_URL, TEMPORAL_ADDRESS, HOST and PORT over it. */
  env: NodeJS.ProcessEnv;
  /** Postgres server settings (a benchmark's pg_stat_statements). */
  postgresSettings?: Record<string, string>;
  /** The dev server keeps its state in a file of the folder, so that a restart finds its workflows; else in memory. */
  temporalStateFile?: boolean;
  /** The dev server's dynamic configuration, `key=jsonValue` each. */
  temporalDynamicConfig?: readonly string[];
  /** Runs after the migrations, before anything else (bulk data, extensions). */
  prepare?: (db: Db) => Promise<void>;
}

export interface RoleOptions {
  /** Its name in the cluster and its log's; the role's unless given. */
  name?: string;
  /** When it counts as started; without it, once it runs. */
  ready?: Readiness;
  /** Over the cluster's environment. */
  env?: NodeJS.ProcessEnv;
  /** Node's own options (`--cpu-prof`, `--max-old-space-size=256`). */
  nodeArgs?: string[];
  /** Another built checkout (a release a drill made, the commit before an optimisation); this one unless given. */
  root?: string;
  /** A script that runs in place of `dist/src/main.js <role>` (a benchmark's variant of the role), with its arguments. */
  script?: { path: string; args: string[] };
  /** A Node IPC channel to it. */
  ipc?: boolean;
}

/**
 * The service as separate real processes on loopback, as the drills and the dev-server benchmarks run it: an embedded
 * Postgres (not durable: they stop processes, never the machine), the Temporal dev server (src/temporal/dev-server.ts),
 * and the roles of dist/src/main.js, each a process of one topology (stack/launcher.ts). Postgres runs, migrated
 * and with its staff user, once startDevCluster resolves; Temporal and the roles start when the scenario says.
 */
export interface DevCluster {
  /** Its folder: the logs (`<process>.log`), the Postgres cluster, the dev server's state. */
  dir: string;
  /** The application's database, for the scenario's own reads and writes. */
  db: Db;
  databaseUrl: string;
  apiPort: number;
  apiUrl: string;
  staff: User;
  postgres: PostgresProcess;
  temporal: DevServerProcess;
  /** Every process of the cluster, in the order of their first start. */
  processes: Launcher;
  /** `node [nodeArgs] <root>/dist/src/main.js <role>` with the cluster's environment, started (and ready, if asked). */
  startRole(role: Role, options?: RoleOptions): Promise<ChildProcessEntry>;
  /** Stops every process in reverse order and deletes the databases; the logs stay in `dir`. */
  stop(): Promise<void>;
}

export async function startDevCluster(options: DevClusterOptions): Promise<DevCluster> {
  const dir = await mkdtemp(path.join(os.tmpdir(), options.folderPrefix));
  // As root, Postgres runs as the `postgres` user, which must be able to reach its data directory.
  await chmod(dir, 0o755);
  const [postgresPort, temporalPort, apiPort] = [await freePort(), await freePort(), await freePort()];
  const processes = launcher();
  const postgresDir = path.join(dir, 'pg');
  const postgres = postgresProcess({ dataDir: postgresDir, port: postgresPort, durable: false, settings: options.postgresSettings, logDir: dir });
  const temporalState = path.join(dir, 'temporal');
  const temporal = devServerProcess({
    port: temporalPort,
    stateDir: options.temporalStateFile ? temporalState : undefined,
    dynamicConfig: options.temporalDynamicConfig,
    logDir: dir,
  });
  let db: Db | undefined;
  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await db?.destroy();
      await processes.stop();
      await rm(postgresDir, { recursive: true, force: true });
      await rm(embeddedPasswordFile(postgresDir), { force: true });
      await rm(temporalState, { recursive: true, force: true });
    })());
  try {
    await processes.start(postgres);
    await postgres.createDatabase(options.database);
    const databaseUrl = postgres.connectionString(options.database);
    db = createDb({ connectionString: databaseUrl, pool: { max: 5 } });
    await migrateToLatest(db);
    const staff = await upsertUser(db, { ...options.staff, isStaff: true });
    await options.prepare?.(db);
    /** Every role's environment. */
    const env: NodeJS.ProcessEnv = {
      ...options.env,
      DATABASE_URL: databaseUrl,
      // The client connects lazily: until the scenario starts Temporal, the roles find nothing there.
      TEMPORAL_ADDRESS: temporal.address,
      HOST: '127.0.0.1',
      PORT: String(apiPort),
    };
    return {
      dir,
      db,
      databaseUrl,
      apiPort,
      apiUrl: `http://127.0.0.1:${apiPort}`,
      staff,
      postgres,
      temporal,
      processes,
      async startRole(role, { name = role, ready, env: own, nodeArgs = [], root = projectRoot, script, ipc } = {}) {
        const entry = childProcess(
          {
            name,
            command: process.execPath,
            args: [...nodeArgs, ...(script ? [script.path, ...script.args] : [path.join(root, 'dist', 'src', 'main.js'), role])],
            env: { ...env, ...own },
            cwd: root,
            // Each role ends its work on SIGTERM within seconds; one that hangs is not waited for forever.
            stopGraceMs: 60_000,
            ready,
          },
          // Roles start one after another, CPU heavy, on two cores that other work may keep busy.
          { logDir: dir, readyTimeoutMs: 120_000, ipc },
        );
        await processes.start(entry);
        return entry;
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
