import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { postmasterPid } from '../bench/support/stack';
import { projectRoot } from '../src/config';
import { EMBEDDED_SUPERUSER } from '../src/db/embedded-credentials';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from '../src/db/embedded-postgres';
import { persistedLocalSecret } from '../src/secrets/local-secret';
import { ensureCertificates, type StackCertificates } from './certificates';
import { COMPOSE_FILE, type Env, imageVersion, loadCompose } from './compose-file';
import { portIsFree } from '../src/shared/free-port';
import { namedPorts, type PortPlan } from './ports';
import { ensureCaddy, ensureTemporalServer, ensureTemporalUi } from './tools';
import { createSupervisor, type Supervisor } from './supervisor';
import { stackTopology, type Topology } from './topology';

/**
 * Runs the topology of docker-compose.yml as processes of this machine (stack/topology.ts says how each service
 * maps), in Compose's order: Postgres, the Temporal schema job, Temporal's services, the namespace job, the
 * migrations, the application's replicas, Caddy. Everything it keeps (the Postgres cluster, generated secrets, the
 * throw-away CA, logs) lives in `dataDir`, so a second start reuses it; the Go builds live in .tools/.
 */

export interface StackOptions {
  dataDir: string;
  ports: PortPlan;
  /** mTLS on the Temporal frontend (the application, the CLI and Temporal's worker service present certificates). */
  tls: boolean;
  /** The variables Compose would take from the shell: they fill the file's `${…}`; unset secrets are generated. */
  shellEnv: Env;
  log: (line: string) => void;
}

export interface RunningStack {
  topology: Topology;
  temporalVersion: string;
  /** The API behind Caddy. */
  apiUrl: string;
  temporalUiUrl: string;
  temporalAddress: string;
  namespace: string;
  certificates?: StackCertificates;
  staff: { username: string; password: string };
  /** The application's environment as its replicas have it (METRICS_TOKEN, DATABASE_URL, …). */
  appEnv: Record<string, string>;
  /** The superuser's connection to the stack's Postgres. */
  postgresUrl(database?: string): string;
  logDir: string;
  /** The generated secrets, one file each (`metrics_token.txt`, `admin-password.txt`, …), mode 0600. */
  secretsDir: string;
  /** Every long-running process by name (`postgres` is the postmaster). */
  processes(): Map<string, number>;
  /** Stops the processes in the reverse order of their start, each with its Compose grace period. */
  stop(): Promise<void>;
}

const TEMPORAL_CLI = path.join(projectRoot, '.tools', 'venv', 'bin', 'temporal');

/** The variables docker-compose.yml requires (`${NAME:?…}`): its secrets. */
function requiredVariables(composeText: string): string[] {
  const code = composeText.replace(/^\s*#.*$/gm, '');
  return [...new Set([...code.matchAll(/\$\{([A-Z][A-Z0-9_]*):\?/g)].map((match) => match[1]))];
}

/** Each secret from the shell, as Compose takes it, or generated once into the data folder (0600). */
async function secrets(composeText: string, secretsDir: string, shellEnv: Env): Promise<Record<string, string>> {
  const values: Record<string, string> = {};
  for (const name of requiredVariables(composeText)) {
    values[name] = shellEnv[name] || (await persistedLocalSecret(secretsDir, name.toLowerCase(), 32));
  }
  return values;
}

/** Before anything starts: a port another program holds would fail one process late, with a less clear message. */
async function refuseTakenPorts(ports: PortPlan): Promise<void> {
  const taken = [];
  for (const { name, port } of namedPorts(ports)) if (!(await portIsFree(port))) taken.push(`${port} (${name})`);
  if (taken.length > 0) throw new Error(`ports in use on 127.0.0.1: ${taken.join(', ')}; choose another --base-port`);
}

/** What the stack runs: Compose's file with its secrets, the Go builds at its versions, the CA, the topology. */
async function planStack(options: StackOptions, secretsDir: string) {
  const { dataDir, ports, log } = options;
  const composeText = readFileSync(COMPOSE_FILE, 'utf8');
  const generated = await secrets(composeText, secretsDir, options.shellEnv);
  const compose = loadCompose({ ...generated, ...options.shellEnv }, composeText);
  const temporalVersion = imageVersion(compose.services.temporal);
  const temporal = await ensureTemporalServer(temporalVersion, log);
  const temporalUi = await ensureTemporalUi(imageVersion(compose.services['temporal-ui']), log);
  const caddy = await ensureCaddy(imageVersion(compose.services.proxy), log);
  if (!existsSync(TEMPORAL_CLI)) throw new Error(`${TEMPORAL_CLI} is missing: run npm run tools`);
  const certificates = options.tls ? await ensureCertificates(path.join(dataDir, 'tls')) : undefined;
  const staff = { username: 'admin', password: await persistedLocalSecret(secretsDir, 'admin-password', 18) };
  const topology = stackTopology({
    compose,
    ports,
    temporal,
    temporalUi,
    caddy,
    temporalCli: TEMPORAL_CLI,
    certificates,
    staff,
    node: process.execPath,
    shell: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? dataDir },
    stateDir: dataDir,
  });
  return { topology, temporalVersion, temporalUiVersion: temporalUi.version, certificates, staff };
}

/** The stack's Postgres (in this process), with the image's init scripts run once on a new cluster. */
async function startPostgres(topology: Topology, options: StackOptions, logDir: string, supervisor: Supervisor): Promise<EmbeddedPostgresHandle> {
  const { dataDir, ports, log } = options;
  const initialised = path.join(dataDir, 'postgres-initialised');
  log(`Postgres on 127.0.0.1:${ports.postgres}`);
  const postgres = await startEmbeddedPostgres({
    dataDir: path.join(dataDir, 'postgres'),
    port: ports.postgres,
    persistent: true,
    durable: true,
    settings: topology.postgres.settings,
    onLog: (message) => void writeFile(path.join(logDir, 'postgres.log'), message, { flag: 'a' }),
  });
  supervisor.onStop('postgres', () => postgres.stop());
  const superuser = new URL(postgres.connectionString());
  // The image runs these once, on an empty volume; so does the stack, on a new cluster.
  if (!existsSync(initialised)) {
    for (const script of topology.postgres.initScripts) {
      await supervisor.runJob({
        name: `postgres-init-${path.basename(script, '.sh')}`,
        service: 'postgres',
        command: '/bin/sh',
        args: [script],
        env: {
          ...topology.postgres.initEnv,
          POSTGRES_USER: EMBEDDED_SUPERUSER,
          POSTGRES_DB: 'postgres',
          PGHOST: '127.0.0.1',
          PGPORT: String(ports.postgres),
          PGPASSWORD: decodeURIComponent(superuser.password),
        },
        stopGraceMs: 0,
      });
    }
    await writeFile(initialised, `${new Date().toISOString()}\n`);
  }
  return postgres;
}

/** Temporal (schema, services, namespace), its UI, the migrations, the application's replicas and Caddy, in Compose's order. */
async function startServices(plan: Awaited<ReturnType<typeof planStack>>, log: (line: string) => void, supervisor: Supervisor): Promise<void> {
  const { topology, temporalVersion, certificates } = plan;
  log(`Temporal ${temporalVersion}: schema`);
  await supervisor.runJob(topology.temporalSchema);
  log(`Temporal ${temporalVersion}: ${topology.temporal.map((spec) => spec.name).join(', ')}${certificates ? ' (mTLS)' : ''}`);
  for (const spec of topology.temporal) await supervisor.launch(spec, 120_000);
  log('Temporal: namespace and search attributes');
  await supervisor.runJob(topology.temporalNamespace);
  log(`Temporal UI ${plan.temporalUiVersion}`);
  await supervisor.launch(topology.temporalUi, 60_000);
  log('Migrations');
  await supervisor.runJob(topology.migrate);

  log(`Application: ${[...topology.delivery, ...topology.api].map((spec) => spec.name).join(', ')}`);
  await Promise.all([...topology.delivery, ...topology.api].map((spec) => supervisor.launch(spec, 180_000)));

  await writeFile(topology.proxy.caddyfilePath, topology.proxy.caddyfile);
  await supervisor.launch(topology.proxy, 60_000);
}

export async function startStack(options: StackOptions): Promise<RunningStack> {
  const { dataDir, ports, log } = options;
  await refuseTakenPorts(ports);
  const logDir = path.join(dataDir, 'logs');
  await mkdir(logDir, { recursive: true, mode: 0o700 });
  const secretsDir = path.join(dataDir, 'secrets');
  const plan = await planStack(options, secretsDir);
  const { topology, certificates } = plan;
  const supervisor = createSupervisor(logDir, log);
  try {
    const postgres = await startPostgres(topology, options, logDir, supervisor);
    await startServices(plan, log, supervisor);
    const postgresPid = await postmasterPid(path.join(dataDir, 'postgres'));
    return {
      topology,
      temporalVersion: plan.temporalVersion,
      apiUrl: `http://127.0.0.1:${ports.balancer}`,
      temporalUiUrl: `http://127.0.0.1:${ports.ui}`,
      temporalAddress: `127.0.0.1:${ports.frontend.grpc}`,
      namespace: topology.temporalNamespace.env.TEMPORAL_NAMESPACE ?? 'default',
      certificates,
      staff: plan.staff,
      appEnv: topology.api[0].env,
      postgresUrl: (database) => postgres.connectionString(database),
      logDir,
      secretsDir,
      processes: () =>
        new Map([
          ['postgres', postgresPid],
          ...[...supervisor.running].filter(([, child]) => child.isRunning()).map(([name, child]) => [name, child.pid] as [string, number]),
        ]),
      stop: () => supervisor.stop(),
    };
  } catch (err) {
    await supervisor.stop();
    throw err;
  }
}
