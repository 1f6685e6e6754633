import { appendFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from '../src/db/embedded-postgres';
import type { StackProcess } from './process';

export interface PostgresProcess extends StackProcess {
  /** The superuser's connection to a database of it; known once it has started. */
  connectionString(database?: string): string;
  createDatabase(name: string): Promise<void>;
}

export interface PostgresOptions {
  /** The cluster's folder, kept from one start to the next (a fault's stop and start find the same data). */
  dataDir: string;
  port: number;
  /** fsync and its kin on (src/db/embedded-postgres.ts). */
  durable: boolean;
  /** Server settings (`-c name=value`). */
  settings?: Record<string, string>;
  logDir: string;
}

/** The postmaster's pid, from its pid file (first line). */
async function postmasterPid(dataDir: string): Promise<number> {
  return Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

/**
 * The embedded Postgres (the npm package's binaries) as a process of a topology, its messages in `postgres.log`.
 * Its stop is Postgres's fast shutdown whatever the signal (the sessions are cut): there is no kill -9 of a cluster
 * here, which a drill would need to recover from.
 */
export function postgresProcess(options: PostgresOptions): PostgresProcess {
  const log = path.join(options.logDir, 'postgres.log');
  let running: { handle: EmbeddedPostgresHandle; pid: number } | undefined;
  /** The last start's: the same port and password for as long as the cluster lives. */
  let started: EmbeddedPostgresHandle | undefined;
  return {
    name: 'postgres',
    log,
    async start() {
      if (running) throw new Error('postgres runs already');
      const handle = await startEmbeddedPostgres({
        dataDir: options.dataDir,
        port: options.port,
        persistent: true,
        durable: options.durable,
        settings: options.settings,
        onLog: (message) => appendFileSync(log, message),
      });
      started = handle;
      running = { handle, pid: await postmasterPid(options.dataDir) };
    },
    // Started is ready: the package resolves once Postgres accepts connections.
    ready: async () => undefined,
    async stop() {
      const stopping = running;
      running = undefined;
      await stopping?.handle.stop();
    },
    pid: () => running?.pid,
    connectionString(database) {
      if (!started) throw new Error('postgres has not started yet');
      return started.connectionString(database);
    },
    async createDatabase(name) {
      if (!running) throw new Error('postgres does not run');
      await running.handle.createDatabase(name);
    },
  };
}
