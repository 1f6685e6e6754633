import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { projectRoot, type TemporalTlsSettings } from '../src/config';
import { EMBEDDED_SUPERUSER } from '../src/db/embedded-credentials';
import { persistedLocalSecret } from '../src/secrets/local-secret';
import { portIsFree } from '../src/shared/free-port';
import { temporalConnection, type TemporalConnectionOptions } from '../src/temporal/connection-settings';
import { ensureCertificates, type StackCertificates } from './certificates';
import { childProcess, jobProcess } from './child-process';
import { COMPOSE_FILE, type Env, imageVersion, loadCompose, requiredVariables } from './compose-file';
import { launcher } from './launcher';
import { namedPorts, type PortPlan } from './ports';
import { postgresProcess } from './postgres-process';
import { ensureAlertmanager, ensureCaddy, ensureJaeger, ensurePrometheus, ensureTemporalServer, ensureTemporalUi } from './tools';
import type { ConfiguredProcess } from './observability-topology';
import { type ProcessSpec, stackTopology, type Topology } from './topology';

/**
 * Runs the topology of docker-compose.yml as processes of this machine (stack/topology.ts says how each service
 * maps), in Compose's order: Postgres, Jaeger (which Temporal and the application send traces to from their start),
 * the Temporal schema job, Temporal's services, the namespace job, the migrations, the application's replicas, Caddy,
 * Alertmanager and Prometheus. Everything it keeps (the Postgres cluster, generated secrets, the
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
  /** Postgres and Temporal with its namespace only: no UI, migrations, application replicas or Caddy. */
  temporalOnly?: boolean;
  /** Changes a process before it starts, e.g. a benchmark's variant of a role (the Compose description stays as it is). */
  adjust?: (spec: ProcessSpec) => ProcessSpec;
  /** Postgres settings over Compose's, e.g. a benchmark's `shared_preload_libraries`. */
  postgresSettings?: Record<string, string>;
}

export interface RunningStack {
  topology: Topology;
  temporalVersion: string;
  /** The API behind Caddy. */
  apiUrl: string;
  temporalUiUrl: string;
  /** Jaeger's UI and query API (/api/v3/traces, /api/traces). */
  jaegerUrl: string;
  /** Prometheus' API (the stack's build has no web UI) and Alertmanager's API and UI. */
  prometheusUrl: string;
  alertmanagerUrl: string;
  /** Where Alertmanager sends every notification: the port a drill's or a test's receiver listens on. */
  alertReceiverUrl: string;
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
  /** Every long-running process that runs, by name (`postgres` is the postmaster). */
  processes(): Map<string, number>;
  /**
   * Stops one process as a fault or a deploy would, while the others run on: SIGTERM with its Compose grace period
   * (then SIGKILL), or SIGKILL at once; `postgres` stops fast (its sessions are cut). Not reported as an exit.
   */
  stopProcess(name: string, signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts a stopped process again as it first started (same command, environment and ports); resolves once ready. */
  startProcess(name: string): Promise<void>;
  /** Stops the processes in the reverse order of their start, each with its Compose grace period. */
  stop(): Promise<void>;
}

const TEMPORAL_CLI = path.join(projectRoot, '.tools', 'venv', 'bin', 'temporal');

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

/** The files a client of the stack's frontend needs under mTLS, as the TEMPORAL_TLS_* settings name them. */
export function temporalTlsSettings({ certificates }: RunningStack): TemporalTlsSettings | undefined {
  return certificates && { caFile: certificates.ca, certFile: certificates.client.cert, keyFile: certificates.client.key, serverName: certificates.serverName };
}

/** How a client of this machine reaches the stack's Temporal frontend, with its client certificate under mTLS. */
export function temporalClientOptions(stack: RunningStack): TemporalConnectionOptions {
  return temporalConnection(stack.temporalAddress, { tls: temporalTlsSettings(stack) }).options;
}

export async function startStack(options: StackOptions): Promise<RunningStack> {
  const { dataDir, ports, log } = options;
  await refuseTakenPorts(ports);
  const logDir = path.join(dataDir, 'logs');
  await mkdir(logDir, { recursive: true, mode: 0o700 });

  const composeText = readFileSync(COMPOSE_FILE, 'utf8');
  const secretsDir = path.join(dataDir, 'secrets');
  const generated = await secrets(composeText, secretsDir, options.shellEnv);
  const compose = loadCompose({ ...generated, ...options.shellEnv }, composeText);
  const temporalVersion = imageVersion(compose.services.temporal);
  const temporal = await ensureTemporalServer(temporalVersion, log);
  const temporalUi = await ensureTemporalUi(imageVersion(compose.services['temporal-ui']), log);
  const caddy = await ensureCaddy(imageVersion(compose.services.proxy), log);
  const jaeger = await ensureJaeger(imageVersion(compose.services.jaeger), log);
  const prometheus = await ensurePrometheus(imageVersion(compose.services.prometheus), log);
  const alertmanager = await ensureAlertmanager(imageVersion(compose.services.alertmanager), log);
  if (!existsSync(TEMPORAL_CLI)) throw new Error(`${TEMPORAL_CLI} is missing: run npm run tools`);
  const certificates = options.tls ? await ensureCertificates(path.join(dataDir, 'tls')) : undefined;
  const staff = { username: 'admin', password: await persistedLocalSecret(secretsDir, 'admin-password', 18) };
  const topology = stackTopology({
    compose,
    ports,
    temporal,
    temporalUi,
    caddy,
    jaeger,
    prometheus,
    alertmanager,
    temporalCli: TEMPORAL_CLI,
    certificates,
    staff,
    node: process.execPath,
    shell: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? dataDir },
    stateDir: dataDir,
  });

  const processes = launcher(log);
  let stopping = false;
  const stop = () => {
    stopping = true;
    return processes.stop();
  };
  const adjust = options.adjust ?? ((spec: ProcessSpec) => spec);
  /** A long-running process, changed as the options say; says so when it ends while the stack runs. */
  const service = (spec: ProcessSpec, readyTimeoutMs: number) =>
    childProcess(adjust(spec), {
      logDir,
      readyTimeoutMs,
      onUnexpectedExit: (code, tail) => {
        if (!stopping) log(`${spec.name} exited (code ${code}) while the stack runs${tail}`);
      },
    });
  const job = (spec: ProcessSpec) => jobProcess(spec, logDir);
  /** A process whose configuration (and secret) files the stack writes first, readable by this user alone. */
  const configured = async (spec: ConfiguredProcess) => {
    for (const file of [...spec.files, ...(spec.copies ?? [])]) await mkdir(path.dirname(file.path), { recursive: true });
    for (const file of spec.files) await writeFile(file.path, file.content, { mode: 0o600 });
    for (const copy of spec.copies ?? []) await copyFile(copy.from, copy.path);
    return service(spec, 60_000);
  };
  const postgres = postgresProcess({
    dataDir: path.join(dataDir, 'postgres'),
    port: ports.postgres,
    durable: true,
    settings: { ...topology.postgres.settings, ...options.postgresSettings },
    logDir,
  });

  try {
    const initialised = path.join(dataDir, 'postgres-initialised');
    log(`Postgres on 127.0.0.1:${ports.postgres}`);
    await processes.start(postgres);
    // The image runs these once, on an empty volume; so does the stack, on a new cluster.
    if (!existsSync(initialised)) {
      const superuser = new URL(postgres.connectionString());
      await processes.start(
        ...topology.postgres.initScripts.map((script) =>
          job({
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
          }),
        ),
      );
      await writeFile(initialised, `${new Date().toISOString()}\n`);
    }

    log(`Jaeger ${jaeger.release}: traces on 127.0.0.1:${ports.jaeger.otlpGrpc} (OTLP gRPC), :${ports.jaeger.otlpHttp} (OTLP HTTP)`);
    await processes.start(service(topology.jaeger, 60_000));
    log(`Temporal ${temporalVersion}: schema`);
    await processes.start(job(topology.temporalSchema));
    log(`Temporal ${temporalVersion}: ${topology.temporal.map((spec) => spec.name).join(', ')}${certificates ? ' (mTLS)' : ''}`);
    await processes.start(...topology.temporal.map((spec) => service(spec, 120_000)));
    log('Temporal: namespace and search attributes');
    await processes.start(job(topology.temporalNamespace));
    if (!options.temporalOnly) {
      // Before the UI, which reads the provider's discovery document when it starts.
      log('Login provider of the Temporal UI');
      await processes.start(service(topology.oidcProvider, 60_000));
      log(`Temporal UI ${temporalUi.version}`);
      await processes.start(await configured(topology.temporalUi));
      await processes.start(service(topology.temporalUiGuard, 60_000));
      log('Migrations');
      await processes.start(job(topology.migrate));

      log(`Application: ${[...topology.delivery, ...topology.api].map((spec) => spec.name).join(', ')}`);
      await processes.start([...topology.delivery, ...topology.api].map((spec) => service(spec, 180_000)));

      await writeFile(topology.proxy.caddyfilePath, topology.proxy.caddyfile);
      await processes.start(service(topology.proxy, 60_000));

      log(`Alertmanager ${alertmanager.version}, Prometheus ${prometheus.release}`);
      await processes.start(await configured(topology.alertmanager));
      await processes.start(await configured(topology.prometheus));
    }

    return {
      topology,
      temporalVersion,
      apiUrl: `http://127.0.0.1:${ports.balancer}`,
      temporalUiUrl: `http://127.0.0.1:${ports.ui}`,
      jaegerUrl: `http://127.0.0.1:${ports.jaeger.query}`,
      prometheusUrl: `http://127.0.0.1:${ports.prometheus}`,
      alertmanagerUrl: `http://127.0.0.1:${ports.alertmanager}`,
      alertReceiverUrl: `http://127.0.0.1:${ports.alertReceiver}`,
      temporalAddress: `127.0.0.1:${ports.frontend.grpc}`,
      namespace: topology.temporalNamespace.env.TEMPORAL_NAMESPACE ?? 'default',
      certificates,
      staff,
      appEnv: topology.api[0].env,
      postgresUrl: (database) => postgres.connectionString(database),
      logDir,
      secretsDir,
      processes: () => processes.pids(),
      stopProcess: (name, signal) => processes.get(name).stop(signal),
      startProcess: (name) => processes.start(processes.get(name)),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
