import path from 'node:path';
import pg from 'pg';
import type { Config } from '../config';
import { embeddedConnectionString, embeddedPassword } from '../db/embedded-credentials';
import { createDb, type Db, migrateToLatest } from '../db/knex';

const EMBEDDED_DATABASE = 'donations';

async function answers(connectionString: string): Promise<boolean> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The database of a command-line tool: DATABASE_URL when set. Otherwise the embedded default: the running service's
 * Postgres when it is up, else the embedded cluster in DATA_DIR, started for this command alone (and stopped after).
 */
export async function openDatabase(config: Config): Promise<{ db: Db; close: () => Promise<void> }> {
  if (config.database.url) {
    const db = createDb({ connectionString: config.database.url, pool: { max: 1 } });
    return { db, close: () => db.destroy() };
  }
  const clusterDir = path.join(config.database.dataDir, 'postgres');
  const runningUrl = embeddedConnectionString(await embeddedPassword(clusterDir), config.database.embeddedPort, EMBEDDED_DATABASE);
  if (await answers(runningUrl)) {
    const db = createDb({ connectionString: runningUrl, pool: { max: 1 } });
    return { db, close: () => db.destroy() };
  }
  // Loaded only here: the package is an ES module, which Jest's CommonJS runtime (the tests use DATABASE_URL) cannot load.
  const { startEmbeddedPostgres } = await import('../db/embedded-postgres.js');
  const server = await startEmbeddedPostgres({
    dataDir: clusterDir,
    port: config.database.embeddedPort,
    persistent: true,
    durable: true,
  });
  await server.createDatabase(EMBEDDED_DATABASE);
  const db = createDb({ connectionString: server.connectionString(EMBEDDED_DATABASE), pool: { max: 1 } });
  return {
    db,
    close: async () => {
      await db.destroy();
      await server.stop();
    },
  };
}

/** The database of the command-line tools, migrated, for the duration of `use`. */
export async function withDatabase<T>(config: Config, use: (db: Db) => Promise<T>): Promise<T> {
  const { db, close } = await openDatabase(config);
  try {
    await migrateToLatest(db);
    return await use(db);
  } finally {
    await close();
  }
}
