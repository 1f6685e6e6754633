import path from 'node:path';
import type { Readable } from 'node:stream';
import pg from 'pg';
import { upsertUser } from '../auth/users';
import { type Config, loadConfig } from '../config';
import { createDb, type Db, migrateToLatest } from '../db/knex';

/*
 * npm run create-staff-user -- <username>
 * Creates a staff user, or resets the password of an existing one and makes it staff. The password comes from
 * STAFF_PASSWORD or the first line of standard input, never from the command line (where `ps` and shell
 * histories would show it).
 */

const MIN_PASSWORD_LENGTH = 8;
const EMBEDDED_DATABASE = 'donations';

export interface CliIo {
  argv: string[];
  config: Config;
  stdin: Readable;
  stdout: (line: string) => void;
}

async function firstLine(input: Readable): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += chunk.toString();
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0];
}

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
 * DATABASE_URL when set. Otherwise the embedded default: the running service's Postgres when it is up, else the
 * embedded cluster in DATA_DIR, started for this command alone (and stopped after it).
 */
async function openDatabase(config: Config): Promise<{ db: Db; close: () => Promise<void> }> {
  if (config.database.url) {
    const db = createDb({ connectionString: config.database.url, pool: { max: 1 } });
    return { db, close: () => db.destroy() };
  }
  const runningUrl = `postgres://postgres:postgres@127.0.0.1:${config.database.embeddedPort}/${EMBEDDED_DATABASE}`;
  if (await answers(runningUrl)) {
    const db = createDb({ connectionString: runningUrl, pool: { max: 1 } });
    return { db, close: () => db.destroy() };
  }
  // Loaded only here: the package is an ES module, which Jest's CommonJS runtime (the tests use DATABASE_URL) cannot load.
  const { startEmbeddedPostgres } = await import('../db/embedded-postgres.js');
  const server = await startEmbeddedPostgres({
    dataDir: path.join(config.database.dataDir, 'postgres'),
    port: config.database.embeddedPort,
    persistent: true,
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

/** Returns the exit code. */
export async function createStaffUser({ argv, config, stdin, stdout }: CliIo): Promise<number> {
  const [username, ...extra] = argv;
  if (!username || extra.length > 0 || username.startsWith('-')) {
    stdout('Usage: npm run create-staff-user -- <username>   (password from STAFF_PASSWORD or standard input)');
    return 2;
  }
  const password = config.cli.staffPassword ?? (await firstLine(stdin));
  if (password.length < MIN_PASSWORD_LENGTH) {
    stdout(`The password must have at least ${MIN_PASSWORD_LENGTH} characters.`);
    return 2;
  }
  const { db, close } = await openDatabase(config);
  try {
    await migrateToLatest(db);
    const user = await upsertUser(db, { username, password, isStaff: true });
    stdout(`Staff user "${user.username}" (id ${user.id}) is ready.`);
    return 0;
  } finally {
    await close();
  }
}

if (require.main === module) {
  const exit = (code: number) => process.exit(code);
  const fail = (err: unknown) => {
    process.stderr.write(`create-staff-user failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  };
  Promise.resolve()
    .then(() =>
      createStaffUser({
        argv: process.argv.slice(2),
        config: loadConfig(),
        stdin: process.stdin,
        stdout: (line) => process.stdout.write(`${line}\n`),
      }),
    )
    .then(exit, fail);
}
