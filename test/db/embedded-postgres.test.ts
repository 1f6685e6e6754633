import { chmod, mkdtemp, readFile, rm, stat, unlink } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { embeddedConnectionString, embeddedPasswordFile } from '../../src/db/embedded-credentials';
import { traversableBy } from '../../src/db/postgres-user-access';
import { createTestDatabase } from '../support/database';
import { freePort } from '../support/free-port';
import { type EmbeddedCluster, startEmbeddedCluster } from '../support/embedded-cluster';
import type { Finished } from '../support/typescript-process';

/*
 * The embedded default is where `npm start` keeps its data: it must survive a crash of the machine (fsync,
 * synchronous_commit, full_page_writes on) and not open to anyone on the machine who knows the default password.
 */

const runsAsRoot = os.userInfo().uid === 0;
const modeOf = async (file: string) => (await stat(file)).mode & 0o777;

let root: string;
let dataDir: string;
let clusterDir: string;
let port: number;
let server: { stop(): Promise<Finished> } | undefined;

/** The cluster as `npm start` runs it, in a process of its own. */
const startCluster = (cluster = clusterDir, clusterPort = port): Promise<EmbeddedCluster> => startEmbeddedCluster(cluster, clusterPort);

beforeAll(async () => {
  // mkdtemp makes a 0700 folder; as root the `postgres` user must pass through it, as through any folder above DATA_DIR.
  root = await mkdtemp(path.join(os.tmpdir(), 'embedded-postgres-'));
  await chmod(root, 0o755);
  dataDir = path.join(root, 'data');
  clusterDir = path.join(dataDir, 'postgres');
  port = await freePort();
});
afterAll(async () => {
  await server?.stop();
  await rm(root, { recursive: true, force: true });
});

const start = () => startCluster();

async function query(password: string, sql: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: embeddedConnectionString(password, port) });
  try {
    await client.connect();
    return (await client.query(sql)).rows;
  } finally {
    await client.end().catch(() => undefined);
  }
}

const keptPassword = async () => (await readFile(embeddedPasswordFile(clusterDir), 'utf8')).trim();
const refusal = (password: string) => query(password, 'SELECT 1').then(() => 'accepted', (err: { code?: string }) => err.code);

test('the start command’s cluster is durable, listens on 127.0.0.1, and its superuser password is generated and kept 0600', async () => {
  server = await start();
  const password = await keptPassword();
  expect(password).toMatch(/^[A-Za-z0-9_-]{32}$/);
  const settings = await query(password, "SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'listen_addresses') ORDER BY name");
  expect(settings).toEqual([
    { name: 'fsync', setting: 'on' },
    { name: 'full_page_writes', setting: 'on' },
    { name: 'listen_addresses', setting: '127.0.0.1' },
    { name: 'synchronous_commit', setting: 'on' },
  ]);
  expect(await refusal('postgres')).toBe('28P01');
  expect(await modeOf(embeddedPasswordFile(clusterDir))).toBe(0o600);
  // DATA_DIR is this service's: not listable by others; as root, passable for the `postgres` user.
  expect(await modeOf(dataDir)).toBe(runsAsRoot ? 0o711 : 0o700);
});

test('tests and benchmarks switch durability off explicitly', async () => {
  const { db } = await createTestDatabase();
  try {
    const rows = await db('pg_settings').whereIn('name', ['fsync', 'synchronous_commit', 'full_page_writes']).orderBy('name').select('name', 'setting');
    expect(rows).toEqual([
      { name: 'fsync', setting: 'off' },
      { name: 'full_page_writes', setting: 'off' },
      { name: 'synchronous_commit', setting: 'off' },
    ]);
  } finally {
    await db.destroy();
  }
});

test('a cluster from before, with the password `postgres`, keeps working and gets a generated password', async () => {
  await query(await keptPassword(), "ALTER ROLE postgres PASSWORD 'postgres'");
  await server!.stop();
  await unlink(embeddedPasswordFile(clusterDir));

  server = await start();
  const password = await keptPassword();
  expect(password).not.toBe('postgres');
  expect(await query(password, 'SELECT current_user AS who')).toEqual([{ who: 'postgres' }]);
  expect(await refusal('postgres')).toBe('28P01');
});

test('a crash between writing the password file and changing the password is caught up at the next start', async () => {
  const password = await keptPassword();
  await query(password, "ALTER ROLE postgres PASSWORD 'postgres'");
  await server!.stop();

  server = await start();
  expect(await keptPassword()).toBe(password);
  expect(await refusal(password)).toBe('accepted');
  expect(await refusal('postgres')).toBe('28P01');
});

test('a cluster whose password is neither the kept one nor the former default is refused, and not left running', async () => {
  await query(await keptPassword(), "ALTER ROLE postgres PASSWORD 'someone-elses-password'");
  await server!.stop();
  server = undefined;
  await unlink(embeddedPasswordFile(clusterDir));

  await expect(start()).rejects.toThrow(
    `The embedded Postgres in ${clusterDir} accepts neither the password in ${embeddedPasswordFile(clusterDir)} nor the former default`,
  );
  expect(await refusal('someone-elses-password')).toMatch(/ECONNREFUSED/);
});

/** Resolves once the process has exited (Postgres takes a moment to shut down on SIGTERM). */
async function exited(pid: number): Promise<void> {
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await delay(50);
  }
}

test('a start after the start command was killed (kill -9) names the Postgres left running, and starts once it is stopped', async () => {
  const cluster = path.join(root, 'killed', 'postgres');
  const clusterPort = await freePort();
  await (await startCluster(cluster, clusterPort)).kill();
  const orphan = Number((await readFile(path.join(cluster, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  try {
    for (const otherPort of [clusterPort, await freePort()]) {
      await expect(startCluster(cluster, otherPort)).rejects.toThrow(
        `The embedded Postgres in ${cluster} is still running as pid ${orphan} (port ${clusterPort}), most likely from an ` +
          `earlier start that was killed (kill -9) before it could stop it, or another start on this DATA_DIR. Stop that one ` +
          `(kill ${orphan}: Postgres shuts down cleanly on SIGTERM) and start again.`,
      );
    }
  } finally {
    process.kill(orphan, 'SIGTERM');
    await exited(orphan);
  }
  await (await startCluster(cluster, clusterPort)).stop();
});

(runsAsRoot ? test : test.skip)('as root, a DATA_DIR under a folder the postgres user cannot pass is refused with the fix', async () => {
  const closed = await mkdtemp(path.join(root, 'closed-')); // 0700, like `mktemp -d`
  const cluster = path.join(closed, 'data', 'postgres');
  await expect(startCluster(cluster, await freePort())).rejects.toThrow(
    `Postgres runs as the user "postgres" here (this process runs as root), and it cannot pass through ${closed} (mode 0700) ` +
      `to reach ${cluster}. Choose a DATA_DIR outside ${closed}, or let others pass: chmod o+x ${closed}`,
  );
  expect(await modeOf(closed)).toBe(0o700);
});

test('who may pass through a folder', () => {
  const postgres = { uid: 101, gids: [104, 103] };
  const folder = (mode: number, uid = 0, gid = 0) => ({ mode: 0o40000 | mode, uid, gid });
  expect(traversableBy(postgres, folder(0o700))).toBe(false);
  expect(traversableBy(postgres, folder(0o711))).toBe(true);
  expect(traversableBy(postgres, folder(0o701))).toBe(true);
  expect(traversableBy(postgres, folder(0o750, 0, 103))).toBe(true);
  expect(traversableBy(postgres, folder(0o705, 0, 103))).toBe(false); // the group's rights apply, not the others'
  expect(traversableBy(postgres, folder(0o700, 101, 104))).toBe(true);
  expect(traversableBy(postgres, folder(0o077, 101, 104))).toBe(false);
});
