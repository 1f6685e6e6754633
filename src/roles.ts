import type { Config } from './config';
import { migrateToLatest } from './db/knex';
import { ensureDemoAdmin, ensureDemoNonStaffUser } from './demo/admin-user';
import { localSecretsKeys, persistedLocalSecret } from './secrets/local-secret';
import { seedDemoData } from './demo/seed';
import { createLogger } from './logger';
import { createMetrics } from './observability/metrics';
import {
  checkEventIds,
  type Runtime,
  startApi,
  refuseSharedTaskQueue,
  startMetricsListener,
  startRelay,
  startTemporalClient,
  startWorker,
} from './runtime/components';
import { connectDatabase, connectTemporal } from './runtime/infrastructure';
import { installTemporalRuntime } from './temporal/sdk-runtime';
import { Lifecycle } from './runtime/lifecycle';
import type { Tracing } from './observability/tracing/start-tracing';
import { traceLogFields } from './tracing';

/*
 * The process roles, loaded by the start command (src/main.ts) once it has decided whether to trace.
 */

/**
 * Installs the Temporal SDK runtime for a role that runs a worker; its metrics are exported when the role serves
 * /metrics (METRICS_PORT, or the API's in `all`), and nobody would read them otherwise.
 */
async function withTemporalRuntime(runtime: Runtime, exportMetrics = runtime.config.metrics.port !== undefined): Promise<Runtime> {
  return { ...runtime, temporalSdkMetrics: await installTemporalRuntime(runtime.log, { exportMetrics }) };
}

/**
 * `all` (the default, `npm start`): the embedded default in one process — Postgres and the Temporal dev server
 * unless DATABASE_URL / TEMPORAL_ADDRESS point elsewhere, migrations, demo data, API, worker and outbox relay.
 * The other roles are the separate services of the production stack (docker-compose.yml): `api`, `delivery` (worker
 * and relay together), or `worker` and `relay` apart, and the one-off `migrate`, which the others start after: the
 * `api` role writes events and relies on `migrate` having checked the event ids against Temporal (checkEventIds).
 */
const ROLES = {
  async all(baseRuntime: Runtime) {
    const { config, log, lifecycle } = baseRuntime;
    // Before the dev server and the worker create the SDK runtime. The API's /metrics shows the worker's too.
    const runtime = await withTemporalRuntime(baseRuntime, true);
    const started = Date.now();
    if (config.auth.jwtSecretGenerated && !config.production) {
      config.auth.jwtSecrets = [await persistedLocalSecret(config.database.dataDir, 'jwt-secret', 32)];
    }
    const db = await connectDatabase(config, log, lifecycle, 'embedded-allowed');
    log.info({ applied: await migrateToLatest(db) }, 'migrations applied');
    const temporal = await connectTemporal(config, log, lifecycle, 'embedded-allowed');
    // Before the demo data and the API write events: none may get an id a predecessor database already sent.
    await checkEventIds(runtime, db, temporal.connection);
    const lines: string[] = [];
    if (config.demo.seed) {
      const admin = await ensureDemoAdmin(db, config);
      const viewer = await ensureDemoNonStaffUser(db, config);
      log.info(await seedDemoData(db, config), 'demo data');
      lines.push(`Staff user:  ${admin.username} / ${admin.password}`);
      lines.push(`Non-staff:   ${viewer.username} / ${viewer.password}  (signs in; the API answers 403; demo data: docs/demo.md)`);
    }
    // One connection to Temporal for worker, relay and API: the relay's starts are eager (startRelay). One process runs
    // one release at a time, so its worker is unversioned (docs/delivery.md#releases-and-running-workflows).
    const { client, startsEagerly } = await startWorker(runtime, db, temporal.connection, { versioned: false });
    startRelay(runtime, db, client, { eagerStart: startsEagerly });
    const port = await startApi(runtime, db, client);
    lines.unshift(`API:         http://localhost:${port}/  (health: /healthz, docs: /api/swagger/, admin: /admin/)`);
    if (temporal.uiUrl) lines.splice(1, 0, `Temporal UI: ${temporal.uiUrl}`);
    lines.push(`Ready in ${((Date.now() - started) / 1000).toFixed(1)} s. Ctrl-C stops everything.`);
    process.stdout.write(`\n${lines.join('\n')}\n\n`);
  },

  async api(runtime: Runtime) {
    const db = await connectDatabase(runtime.config, runtime.log, runtime.lifecycle, 'external-required');
    const temporal = await connectTemporal(runtime.config, runtime.log, runtime.lifecycle, 'external-required');
    const port = await startApi(runtime, db, startTemporalClient(runtime, temporal.connection));
    runtime.log.info({ port }, 'API listening');
  },

  async worker(baseRuntime: Runtime) {
    const runtime = await withTemporalRuntime(baseRuntime);
    const db = await connectDatabase(runtime.config, runtime.log, runtime.lifecycle, 'external-required');
    const temporal = await connectTemporal(runtime.config, runtime.log, runtime.lifecycle, 'external-required');
    await startWorker(runtime, db, temporal.connection, { versioned: runtime.config.temporal.workerVersioning });
    const metricsPort = await startMetricsListener(runtime, db);
    runtime.log.info({ taskQueue: runtime.config.temporal.taskQueue, metricsPort }, 'delivery worker running');
  },

  /**
   * Worker and relay in one process on one connection, so that the relay's workflow starts are eager: Temporal
   * hands the first workflow task to this process's worker with the start's answer (BENCHMARKS.md, part 1).
   */
  async delivery(baseRuntime: Runtime) {
    const runtime = await withTemporalRuntime(baseRuntime);
    const db = await connectDatabase(runtime.config, runtime.log, runtime.lifecycle, 'external-required');
    const temporal = await connectTemporal(runtime.config, runtime.log, runtime.lifecycle, 'external-required');
    const { client, startsEagerly } = await startWorker(runtime, db, temporal.connection, { versioned: runtime.config.temporal.workerVersioning });
    startRelay(runtime, db, client, { eagerStart: startsEagerly });
    const metricsPort = await startMetricsListener(runtime, db);
    runtime.log.info({ taskQueue: runtime.config.temporal.taskQueue, metricsPort }, 'delivery worker and outbox relay running');
  },

  async relay(runtime: Runtime) {
    const db = await connectDatabase(runtime.config, runtime.log, runtime.lifecycle, 'external-required');
    const temporal = await connectTemporal(runtime.config, runtime.log, runtime.lifecycle, 'external-required');
    const client = startTemporalClient(runtime, temporal.connection);
    await refuseSharedTaskQueue(runtime, db, client);
    startRelay(runtime, db, client);
    runtime.log.info({ metricsPort: await startMetricsListener(runtime, db) }, 'outbox relay running');
  },

  /**
   * One-off job: migrate, check the event ids against Temporal (checkEventIds), and create or reset the staff user
   * named by ADMIN_USERNAME when ADMIN_PASSWORD is set.
   */
  async migrate(runtime: Runtime) {
    const { config, log, lifecycle } = runtime;
    const db = await connectDatabase(config, log, lifecycle, 'external-required');
    const temporal = await connectTemporal(config, log, lifecycle, 'external-required');
    log.info({ applied: await migrateToLatest(db) }, 'migrations applied');
    await checkEventIds(runtime, db, temporal.connection);
    if (config.demo.adminPassword) {
      const admin = await ensureDemoAdmin(db, config);
      log.info({ username: admin.username }, 'staff user created or updated');
    }
    await lifecycle.stop();
  },
} satisfies Record<string, (runtime: Runtime) => Promise<void>>;

/** Runs the role named `roleName` with the configuration src/main.ts read; `tracing` is stopped last. */
export async function runRole(roleName: string, config: Config, tracing: Tracing | undefined): Promise<void> {
  // Each line logged inside a span carries its trace_id and span_id; without tracing, pino calls nothing extra.
  const log = createLogger(config.logLevel, undefined, undefined, tracing && traceLogFields);
  const lifecycle = new Lifecycle(log);
  if (tracing) lifecycle.onStop(() => tracing.shutdown());
  if (!Object.hasOwn(ROLES, roleName)) {
    log.fatal(`unknown role "${roleName}"; use one of: ${Object.keys(ROLES).join(', ')}`);
    process.exit(2);
  }
  lifecycle.exitOnSignals();
  try {
    // Without SECRETS_KEYS (never in production), every role of this machine seals and opens with DATA_DIR's key.
    if (config.secrets.generated) config.secrets.keys = await localSecretsKeys(config.database.dataDir);
    const metrics = createMetrics({ processMetrics: true });
    await ROLES[roleName as keyof typeof ROLES]({ config, log, lifecycle, metrics });
  } catch (thrown) {
    // Whatever was thrown, the line says why: a library that rejects with nothing would leave a bare "start-up failed".
    const err = thrown instanceof Error ? thrown : new Error(`rejected with ${String(thrown)}, no reason given`);
    log.fatal({ err }, `start-up failed: ${err.message}`);
    await lifecycle.stop();
    process.exit(1);
  }
}
