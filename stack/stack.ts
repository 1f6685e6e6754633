import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { postmasterPid } from '../bench/support/stack';
import { type Child, portAnswers, startChild, waitFor } from '../drills/support/processes';
import { projectRoot, type TemporalTlsSettings } from '../src/config';
import { EMBEDDED_SUPERUSER } from '../src/db/embedded-credentials';
import { type EmbeddedPostgresHandle, startEmbeddedPostgres } from '../src/db/embedded-postgres';
import { persistedLocalSecret } from '../src/secrets/local-secret';
import { temporalConnection, type TemporalConnectionOptions } from '../src/temporal/connection-settings';
import { ensureCertificates, type StackCertificates } from './certificates';
import { COMPOSE_FILE, type Env, imageVersion, loadCompose } from './compose-file';
import { portIsFree } from '../src/shared/free-port';
import { namedPorts, type PortPlan } from './ports';
import { ensureCaddy, ensureTemporalServer, ensureTemporalUi } from './tools';
import { type ProcessSpec, stackTopology, type Topology } from './topology';

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
  /** Postgres and Temporal with its namespace only: no UI, migrations, application replicas or Caddy. */
  temporalOnly?: boolean;
  /** Changes a process before it starts, e.g. a benchmark's variant of a role (the Compose description stays as it is). */
  adjust?: (spec: ProcessSpec) => ProcessSpec;
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

function logTail(logDir: string, name: string): string {
  const file = path.join(logDir, `${name}.log`);
  if (!existsSync(file)) return '';
  const lines = readFileSync(file, 'utf8').trimEnd().split('\n').slice(-15);
  return `\n  ${lines.join('\n  ')}\n(log: ${file})`;
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

  /** Each long-running process by name, in the order of their start, with how it starts and what runs now. */
  const processes = new Map<string, { spec?: ProcessSpec; timeoutMs: number; child?: Child; postgres?: EmbeddedPostgresHandle; pid?: number }>();
  /** Stopped on purpose (a drill's fault, a restart): its exit is not news. */
  const stoppedOnPurpose = new Set<Child>();
  let stopping: Promise<void> | undefined;

  const clusterDir = path.join(dataDir, 'postgres');
  const startPostgres = async () => {
    const postgres = await startEmbeddedPostgres({
      dataDir: clusterDir,
      port: ports.postgres,
      persistent: true,
      durable: true,
      settings: topology.postgres.settings,
      onLog: (message) => void writeFile(path.join(logDir, 'postgres.log'), message, { flag: 'a' }),
    });
    processes.set('postgres', { timeoutMs: 0, postgres, pid: await postmasterPid(clusterDir) });
    return postgres;
  };

  /** Starts a long-running process and waits until it is ready; says so when it ends while the stack runs. */
  const launch = async (spec: ProcessSpec, timeoutMs: number): Promise<Child> => {
    const child = startChild(spec.name, spec.command, spec.args, spec.env, logDir);
    processes.set(spec.name, { spec, timeoutMs, child });
    void child.exited.then((code) => {
      if (!stopping && !stoppedOnPurpose.has(child)) log(`${spec.name} exited (code ${code}) while the stack runs${logTail(logDir, spec.name)}`);
    });
    const { ready } = spec;
    if (!ready) return child;
    const what = 'port' in ready ? `${spec.name} on port ${ready.port}` : `${spec.name} at ${ready.url}`;
    const check = 'port' in ready
      ? () => portAnswers(ready.port)
      : async () => (await fetch(ready.url, { signal: AbortSignal.timeout(2_000) })).ok;
    // Thrown synchronously, out of waitFor: a process that ended will not become ready.
    await waitFor(what, () => {
      if (!child.isRunning()) throw new Error(`${spec.name} exited during start${logTail(logDir, spec.name)}`);
      return check();
    }, timeoutMs);
    return child;
  };

  const stopProcess = async (name: string, signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM') => {
    const entry = processes.get(name);
    if (!entry) throw new Error(`the stack has no process ${name}`);
    if (entry.postgres) {
      // Postgres's fast shutdown; there is no kill -9 of a cluster here, which a drill would need to recover from.
      await entry.postgres.stop();
      entry.postgres = undefined;
      return;
    }
    const { child, spec } = entry;
    if (!child?.isRunning()) return;
    stoppedOnPurpose.add(child);
    if (signal === 'SIGKILL') return child.kill('SIGKILL');
    const kill = setTimeout(() => void child.kill('SIGKILL'), spec!.stopGraceMs);
    await child.kill('SIGTERM');
    clearTimeout(kill);
  };

  const startProcess = async (name: string) => {
    const entry = processes.get(name);
    if (!entry) throw new Error(`the stack has no process ${name}`);
    if (name === 'postgres') {
      if (!entry.postgres) await startPostgres();
      return;
    }
    if (entry.child?.isRunning()) throw new Error(`${name} runs already`);
    await launch(entry.spec!, entry.timeoutMs);
  };

  const stop = () =>
    (stopping ??= (async () => {
      for (const name of [...processes.keys()].reverse()) {
        const started = Date.now();
        await stopProcess(name).catch((err: unknown) => log(`while stopping ${name}: ${(err as Error).message}`));
        log(`  stopped ${name} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      }
    })());

  /** A one-off job: runs to completion, and must succeed (Compose: service_completed_successfully). */
  const runJob = async (spec: ProcessSpec) => {
    const code = await startChild(spec.name, spec.command, spec.args, spec.env, logDir).exited;
    if (code !== 0) throw new Error(`${spec.name} failed (exit ${code})${logTail(logDir, spec.name)}`);
  };

  try {
    const initialised = path.join(dataDir, 'postgres-initialised');
    log(`Postgres on 127.0.0.1:${ports.postgres}`);
    const postgres = await startPostgres();
    const superuser = new URL(postgres.connectionString());
    // The image runs these once, on an empty volume; so does the stack, on a new cluster.
    if (!existsSync(initialised)) {
      for (const script of topology.postgres.initScripts) {
        await runJob({
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

    const adjust = options.adjust ?? ((spec: ProcessSpec) => spec);
    log(`Temporal ${temporalVersion}: schema`);
    await runJob(topology.temporalSchema);
    log(`Temporal ${temporalVersion}: ${topology.temporal.map((spec) => spec.name).join(', ')}${certificates ? ' (mTLS)' : ''}`);
    for (const spec of topology.temporal) await launch(adjust(spec), 120_000);
    log('Temporal: namespace and search attributes');
    await runJob(topology.temporalNamespace);
    if (!options.temporalOnly) {
      log(`Temporal UI ${temporalUi.version}`);
      await launch(adjust(topology.temporalUi), 60_000);
      log('Migrations');
      await runJob(topology.migrate);

      log(`Application: ${[...topology.delivery, ...topology.api].map((spec) => spec.name).join(', ')}`);
      await Promise.all([...topology.delivery, ...topology.api].map((spec) => launch(adjust(spec), 180_000)));

      await writeFile(topology.proxy.caddyfilePath, topology.proxy.caddyfile);
      await launch(adjust(topology.proxy), 60_000);
    }

    return {
      topology,
      temporalVersion,
      apiUrl: `http://127.0.0.1:${ports.balancer}`,
      temporalUiUrl: `http://127.0.0.1:${ports.ui}`,
      temporalAddress: `127.0.0.1:${ports.frontend.grpc}`,
      namespace: topology.temporalNamespace.env.TEMPORAL_NAMESPACE ?? 'default',
      certificates,
      staff,
      appEnv: topology.api[0].env,
      postgresUrl: (database) => postgres.connectionString(database),
      logDir,
      secretsDir,
      processes: () =>
        new Map(
          [...processes]
            .filter(([, { child, postgres: cluster }]) => cluster ?? child?.isRunning())
            .map(([name, { child, pid }]) => [name, child?.pid ?? pid!] as [string, number]),
        ),
      stopProcess,
      startProcess,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
