import { chmod, mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from '../../src/db/embedded-postgres';
import { createDb, migrateToLatest } from '../../src/db/knex';
import { freePort } from './free-port';

const TEMPLATE_DATABASE = 'app_template';

/**
 * One real Postgres for the whole run, with a migrated template database; every test file copies the template
 * (CREATE DATABASE … TEMPLATE), which is fast and keeps files isolated from each other.
 */
export default async function globalSetup(): Promise<void> {
  if (!process.env.TEST_DATABASE_URL) {
    const runDir = await mkdtemp(path.join(os.tmpdir(), 'donation-webhooks-test-'));
    // As root, Postgres runs as the `postgres` user, which must be able to reach its data directory.
    await chmod(runDir, 0o755);
    const dataDir = path.join(runDir, 'pg');
    // Thrown away after the run: durability would only cost time.
    const server = await startEmbeddedPostgres({ dataDir, port: await freePort(), persistent: false, durable: false });
    (globalThis as { __embeddedPostgres?: typeof server }).__embeddedPostgres = server;
    process.env.TEST_DATABASE_URL = server.connectionString('postgres');
  }
  const adminUrl = new URL(process.env.TEST_DATABASE_URL);
  const admin = createDb({ connectionString: adminUrl.toString(), pool: { max: 1 } });
  try {
    await admin.raw(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE}`);
    await admin.raw(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  } finally {
    await admin.destroy();
  }
  adminUrl.pathname = `/${TEMPLATE_DATABASE}`;
  const template = createDb({ connectionString: adminUrl.toString(), pool: { max: 1 } });
  try {
    await migrateToLatest(template);
  } finally {
    await template.destroy();
  }
}
