import path from 'node:path';
import type { Config } from '../config';
import { startEmbeddedPostgres } from '../db/embedded-postgres';
import { createDb, type Db } from '../db/knex';
import type { Logger } from '../logger';
import { openTemporalSettings } from '../temporal/connection';
import type { TemporalConnectionOptions } from '../temporal/connection-settings';
import { startDevServer } from '../temporal/dev-server';
import type { Lifecycle } from './lifecycle';

/**
 * Whether a role may start the embedded Postgres and Temporal dev server when no external ones are configured.
 * Only the all-in-one start command does; the separate production roles fail fast instead of quietly running
 * against a private database of their own.
 */
export type EmbeddedFallback = 'embedded-allowed' | 'external-required';

export async function connectDatabase(
  config: Config,
  log: Logger,
  lifecycle: Lifecycle,
  fallback: EmbeddedFallback,
): Promise<Db> {
  let url = config.database.url;
  if (!url) {
    if (fallback === 'external-required') throw new Error('DATABASE_URL must be set for this role');
    const server = await startEmbeddedPostgres({
      dataDir: path.join(config.database.dataDir, 'postgres'),
      port: config.database.embeddedPort,
      persistent: true,
      durable: true,
    });
    lifecycle.onStop(() => server.stop());
    await server.createDatabase('donations');
    url = server.connectionString('donations');
    log.info({ port: config.database.embeddedPort }, 'embedded Postgres started');
  }
  const db = createDb({ connectionString: url });
  lifecycle.onStop(() => db.destroy());
  return db;
}

export interface TemporalEndpoint {
  /** What every connection of this process to Temporal is made with (worker, clients, schedules). */
  connection: TemporalConnectionOptions;
  uiUrl?: string;
}

/**
 * The Temporal this process talks to: TEMPORAL_ADDRESS with its TLS settings, or the embedded dev server where the
 * role allows one. Bad TLS files fail here, at start, naming their setting; the line logged says where, which
 * namespace and how it is secured, never a key.
 */
export async function connectTemporal(
  config: Config,
  log: Logger,
  lifecycle: Lifecycle,
  fallback: EmbeddedFallback,
): Promise<TemporalEndpoint> {
  if (config.temporal.address) {
    return { connection: openTemporalSettings(config.temporal.address, config.temporal, log), uiUrl: config.temporal.uiUrl };
  }
  if (fallback === 'external-required') throw new Error('TEMPORAL_ADDRESS must be set for this role');
  const server = await startDevServer({
    dataDir: path.join(config.database.dataDir, 'temporal'),
    port: config.temporal.devServerPort,
    uiPort: config.temporal.uiPort,
    namespace: config.temporal.namespace,
    cliPath: config.temporal.cliPath,
    onUnexpectedExit: (exit) => {
      log.fatal({ exit }, 'Temporal dev server ended by itself; stopping');
      void lifecycle.stop().then(() => process.exit(1));
    },
  });
  lifecycle.onStop(() => server.stop());
  log.info({ address: server.address, ui: server.uiUrl, pid: server.pid }, 'Temporal dev server started');
  return { connection: openTemporalSettings(server.address, config.temporal, log), uiUrl: config.temporal.uiUrl ?? server.uiUrl };
}
