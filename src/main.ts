import path from 'node:path';
import type { Server } from 'node:http';
import { createApp } from './api/app';
import { type Config, loadConfig } from './config';
import { startEmbeddedPostgres } from './db/embedded-postgres';
import { createDb, type Db, migrateToLatest } from './db/knex';
import { ensureDemoAdmin } from './demo/admin-user';
import { createLogger, type Logger } from './logger';
import { startDevServer } from './temporal/dev-server';

type Stop = () => Promise<void>;

async function connectDatabase(config: Config, log: Logger, stops: Stop[]): Promise<Db> {
  let url = config.database.url;
  if (!url) {
    const server = await startEmbeddedPostgres({
      dataDir: path.join(config.database.dataDir, 'postgres'),
      port: config.database.embeddedPort,
      persistent: true,
    });
    stops.push(() => server.stop());
    await server.createDatabase('donations');
    url = server.connectionString('donations');
    log.info({ port: config.database.embeddedPort }, 'embedded Postgres started');
  }
  const db = createDb({ connectionString: url });
  stops.push(() => db.destroy());
  return db;
}

async function connectTemporal(config: Config, log: Logger, stops: Stop[]): Promise<{ address: string; uiUrl?: string }> {
  if (config.temporal.address) return { address: config.temporal.address, uiUrl: config.temporal.uiUrl };
  const server = await startDevServer({
    dataDir: path.join(config.database.dataDir, 'temporal'),
    port: config.temporal.devServerPort,
    uiPort: config.temporal.uiPort,
    namespace: config.temporal.namespace,
    cliPath: config.temporal.cliPath,
  });
  stops.push(() => server.stop());
  log.info({ address: server.address, ui: server.uiUrl }, 'Temporal dev server started');
  return server;
}

function listen(app: ReturnType<typeof createApp>, config: Config): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = app.listen(config.http.port, config.http.host);
    server.once('listening', () => resolve(server));
    server.once('error', reject);
  });
}

/**
 * The embedded default: Postgres and Temporal (started here unless DATABASE_URL / TEMPORAL_ADDRESS point
 * elsewhere), migrations, demo data, the HTTP API, the worker and the outbox relay, all in one process.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  const log = createLogger(config.logLevel);
  const stops: Stop[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) {
      await stop().catch((err: unknown) => log.error({ err }, 'error while stopping'));
    }
  };
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      if (stopping) return;
      stopping = true;
      log.info({ signal }, 'stopping');
      void stopAll().then(() => process.exit(0));
    });
  }

  try {
    const started = Date.now();
    const db = await connectDatabase(config, log, stops);
    const applied = await migrateToLatest(db);
    log.info({ applied }, 'migrations applied');
    const temporal = await connectTemporal(config, log, stops);

    const app = createApp({ db, config, log });
    const server = await listen(app, config);
    stops.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as { port: number };

    const lines = [`API:         http://localhost:${port}/  (health: /healthz)`];
    if (temporal.uiUrl) lines.push(`Temporal UI: ${temporal.uiUrl}`);
    if (config.demo.seed) {
      const admin = await ensureDemoAdmin(db, config);
      lines.push(`Staff user:  ${admin.username} / ${admin.password}`);
    }
    if (config.auth.jwtSecretGenerated) lines.push('JWT_SECRET not set: tokens are signed with a key generated for this run');
    lines.push(`Ready in ${((Date.now() - started) / 1000).toFixed(1)} s. Ctrl-C stops everything.`);
    process.stdout.write(`\n${lines.join('\n')}\n\n`);
  } catch (err) {
    log.fatal({ err }, 'start-up failed');
    await stopAll();
    process.exit(1);
  }
}

void main();
