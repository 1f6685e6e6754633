import path from 'node:path';
import { readFileSync } from 'node:fs';
import { type ComposeFile, type ComposeService, durationMs, mountedFile, postgresSettings } from './compose-file';
import type { StackCertificates } from './certificates';
import type { PortPlan, TemporalServicePorts } from './ports';
import type { AlertmanagerTools, CaddyTools, JaegerTools, PrometheusTools, TemporalServerTools, TemporalUiTools } from './tools';
import { type ConfiguredProcess, observabilityTopology } from './observability-topology';
import type { ProcessSpec } from './process-spec';

export type { ProcessSpec } from './process-spec';

/**
 * docker-compose.yml turned into local processes: each Compose service becomes one or more processes with the same
 * program, the same command and the same environment, except what a single machine without containers must change,
 * listed in LOCAL_CHANGES. Pure: test/deploy/stack.test.ts checks it against the Compose file.
 */

export interface Topology {
  postgres: {
    port: number;
    /** `-c` settings of the Compose command (max_connections). */
    settings: Record<string, string>;
    /** The scripts Compose mounts into /docker-entrypoint-initdb.d, run once on a new cluster, in name order. */
    initScripts: string[];
    /** Their environment, without the superuser's connection (known once the cluster runs). */
    initEnv: Record<string, string>;
  };
  temporalSchema: ProcessSpec;
  /** Temporal's services, in start order: history, matching, frontend, worker. */
  temporal: ProcessSpec[];
  temporalNamespace: ProcessSpec;
  oidcProvider: ProcessSpec;
  temporalUi: ConfiguredProcess;
  temporalUiGuard: ProcessSpec;
  migrate: ProcessSpec;
  api: ProcessSpec[];
  delivery: ProcessSpec[];
  proxy: ProcessSpec & { caddyfile: string; caddyfilePath: string };
  /** Traces: started before Temporal and the application, which export to it from their start. */
  jaeger: ProcessSpec;
  prometheus: ConfiguredProcess;
  alertmanager: ConfiguredProcess;
}

export interface TopologyContext {
  /** docker-compose.yml, its variables filled in. */
  compose: ComposeFile;
  ports: PortPlan;
  temporal: TemporalServerTools;
  temporalUi: TemporalUiTools;
  caddy: CaddyTools;
  jaeger: JaegerTools;
  prometheus: PrometheusTools;
  alertmanager: AlertmanagerTools;
  /** The Temporal CLI the namespace job runs (`npm run tools`). */
  temporalCli: string;
  /** undefined: the frontend speaks plain gRPC (`--no-tls`). */
  certificates?: StackCertificates;
  staff: { username: string; password: string };
  /** The node binary for the application's roles (Compose: `node` in the image). */
  node: string;
  /** The runner's PATH and HOME, for the scripts and the CLI. */
  shell: { PATH: string; HOME: string };
  /** Where the stack keeps its state (the Caddyfile it writes, Caddy's own folders). */
  stateDir: string;
}

/**
 * Every setting the stack gives differently from docker-compose.yml, by process kind, with the reason. Everything
 * else reaches the processes exactly as Compose passes it.
 */
export const LOCAL_CHANGES = {
  /** The application's settings the stack sets; Compose may have them (another value) or not. */
  app: {
    HOST: 'containers listen on 0.0.0.0 of their own network; here every process shares the host: loopback only',
    PORT: 'each API replica needs a port of its own on one host',
    DATABASE_URL: 'postgres:5432 is the Compose service name; here 127.0.0.1 and the stack port',
    TEMPORAL_ADDRESS: 'temporal:7233 is the Compose service name; here the frontend on 127.0.0.1',
    METRICS_PORT: 'each delivery replica needs a port of its own on one host',
    TEMPORAL_UI_URL: 'the stack UI on 127.0.0.1',
    PUBLIC_URL: 'clients reach the API at Caddy on 127.0.0.1 and the stack port',
    TRUST_PROXY: 'Caddy reaches the API replicas from its own loopback address (PROXY_SOURCE_ADDRESS), not from its Compose address',
    ALLOW_INSECURE_WEBHOOK_URLS: 'production refuses webhook URLs on loopback; the stack is for trying deliveries on one machine',
    TEMPORAL_TLS: 'mTLS to the stack frontend (--no-tls: as Compose has it)',
    TEMPORAL_TLS_CA_FILE: 'the stack CA',
    TEMPORAL_TLS_CERT_FILE: 'the client certificate the stack CA issued',
    TEMPORAL_TLS_KEY_FILE: 'its key',
    TEMPORAL_TLS_SERVER_NAME: 'the name on the frontend certificate',
    OTEL_EXPORTER_OTLP_ENDPOINT: "jaeger:4318 is the Compose service name; here Jaeger's OTLP HTTP port on 127.0.0.1",
  },
  /** The Temporal UI server's settings the stack sets (the names its config template reads). */
  ui: {
    TEMPORAL_ADDRESS: 'temporal:7233 is the Compose service name; here the frontend on 127.0.0.1',
    TEMPORAL_UI_PORT: 'in Compose 8088 of the login provider\'s network namespace, behind the guard; here its own stack port',
    TEMPORAL_TLS_CA: 'the stack CA',
    TEMPORAL_TLS_CERT: 'the client certificate the stack CA issued',
    TEMPORAL_TLS_KEY: 'its key',
    TEMPORAL_TLS_SERVER_NAME: 'the name on the frontend certificate',
    TEMPORAL_AUTH_PROVIDER_URL: 'the stack login provider on 127.0.0.1 (in Compose the UI reaches it as localhost, in its network namespace)',
    TEMPORAL_AUTH_CALLBACK_URL: 'the stack UI on 127.0.0.1',
  },
  /** The guard's settings (variables of deploy/caddy/temporal-ui-guard.Caddyfile) the stack sets. */
  uiGuard: {
    TEMPORAL_UI_GUARD_BIND: 'loopback, as every process of the stack; in Compose every address of the login provider\'s network namespace',
    TEMPORAL_UI_GUARD_PORT: 'the stack UI port, not 8080',
    TEMPORAL_UI_UPSTREAM: 'the UI server on its stack address and port (UI_SERVER_ADDRESS), not 127.0.0.1:8088',
    TEMPORAL_UI_URL: 'the stack UI on 127.0.0.1',
  },
  /** The login provider's settings the stack sets. */
  oidcProvider: {
    HOST: 'loopback only, as every process of the stack',
    PORT: 'the stack port of the login provider',
    OIDC_ISSUER: 'the stack login provider on 127.0.0.1',
    OIDC_REDIRECT_URI: 'the stack UI on 127.0.0.1',
    OIDC_SIGNING_KEY_FILE: 'the key is kept with the generated secrets, not in a Compose volume',
  },
  temporal: {
    POSTGRES_SEEDS: 'postgres is the Compose service name; here 127.0.0.1',
    DB_PORT: 'the stack Postgres port',
    BIND_ON_IP: 'loopback: the services share one host',
    DYNAMIC_CONFIG_FILE_PATH: 'the mounted file, read where it is in this checkout',
    PROMETHEUS_ENDPOINT: 'each service is a process of its own here, with its own metrics port on 127.0.0.1',
    OTEL_EXPORTER_OTLP_ENDPOINT: "jaeger:4317 is the Compose service name; here Jaeger's OTLP gRPC port on 127.0.0.1",
  },
  /** Jaeger's listen addresses: variables of deploy/jaeger/config.yaml, whose defaults are Compose's (0.0.0.0). */
  jaeger: {
    JAEGER_OTLP_GRPC_ENDPOINT: 'OTLP gRPC on its stack port on 127.0.0.1, not 0.0.0.0:4317',
    JAEGER_OTLP_HTTP_ENDPOINT: 'OTLP HTTP on its stack port on 127.0.0.1, not 0.0.0.0:4318',
    JAEGER_QUERY_HTTP_ENDPOINT: 'the UI and query API on 127.0.0.1 (Compose publishes 16686 on 127.0.0.1 only)',
    JAEGER_QUERY_GRPC_ENDPOINT: 'the query gRPC API on 127.0.0.1',
    JAEGER_METRICS_HOST: "Jaeger's own /metrics on 127.0.0.1",
    JAEGER_METRICS_PORT: 'on its stack port',
  },
  /** Prometheus' settings: prometheus.yml made local (stack/observability-topology.ts) and these. */
  prometheus: {
    METRICS_TOKEN: "written by the stack into the token file that prometheus.yml names, as Compose's start.sh does; not passed on",
  },
} as const;

/** Compose service addresses inside its network, and where the stack has them. */
function localAddresses(ports: PortPlan): Array<[string, string]> {
  return [
    ['postgres:5432', `127.0.0.1:${ports.postgres}`],
    ['temporal:7233', `127.0.0.1:${ports.frontend.grpc}`],
    ['jaeger:4317', `127.0.0.1:${ports.jaeger.otlpGrpc}`],
    ['jaeger:4318', `127.0.0.1:${ports.jaeger.otlpHttp}`],
  ];
}

function relocated(env: Record<string, string> | undefined, ports: PortPlan): Record<string, string> {
  const addresses = localAddresses(ports);
  return Object.fromEntries(
    Object.entries(env ?? {}).map(([name, value]) => [name, addresses.reduce((text, [from, to]) => text.split(from).join(to), value)]),
  );
}

function service(compose: ComposeFile, name: string): ComposeService {
  const found = compose.services[name];
  if (!found) throw new Error(`docker-compose.yml has no service ${name}; stack/topology.ts must follow it`);
  return found;
}

/** A one-off job whose entrypoint is `/bin/sh <mounted script>`: the same script, from this checkout. */
function scriptJob(compose: ComposeFile, name: string, env: Record<string, string>): ProcessSpec {
  const job = service(compose, name);
  const [shell, script] = job.entrypoint ?? [];
  if (shell !== '/bin/sh' || !script) throw new Error(`docker-compose.yml: ${name} no longer runs /bin/sh <script>`);
  return { name, service: name, command: '/bin/sh', args: [mountedFile(job, script)], env, stopGraceMs: 10_000 };
}

/** The server's TLS settings, by the names the temporalio/server image reads (its embedded config template). */
function temporalServerTls(certificates: StackCertificates): Record<string, string> {
  return {
    TEMPORAL_TLS_REQUIRE_CLIENT_AUTH: 'true',
    TEMPORAL_TLS_FRONTEND_CERT: certificates.frontend.cert,
    TEMPORAL_TLS_FRONTEND_KEY: certificates.frontend.key,
    TEMPORAL_TLS_CLIENT1_CA_CERT: certificates.ca,
    // The template lists both client CAs once the first is set.
    TEMPORAL_TLS_CLIENT2_CA_CERT: certificates.ca,
    // Between the services, and from the worker service to the frontend (as its client certificate).
    TEMPORAL_TLS_SERVER_CERT: certificates.internode.cert,
    TEMPORAL_TLS_SERVER_KEY: certificates.internode.key,
    TEMPORAL_TLS_SERVER_CA_CERT: certificates.ca,
    TEMPORAL_TLS_INTERNODE_SERVER_NAME: certificates.serverName,
    TEMPORAL_TLS_FRONTEND_SERVER_NAME: certificates.serverName,
  };
}

/** The variables in which each client of the frontend reads the CA, its certificate, its key and the server name. */
const CLIENT_TLS_VARIABLES = {
  /** The Temporal CLI (the namespace job). */
  cli: ['TEMPORAL_TLS_SERVER_CA_CERT_PATH', 'TEMPORAL_TLS_CLIENT_CERT_PATH', 'TEMPORAL_TLS_CLIENT_KEY_PATH', 'TEMPORAL_TLS_SERVER_NAME'],
  /** The temporalio/ui image's config template. */
  ui: ['TEMPORAL_TLS_CA', 'TEMPORAL_TLS_CERT', 'TEMPORAL_TLS_KEY', 'TEMPORAL_TLS_SERVER_NAME'],
  /** src/config.ts, which also wants TEMPORAL_TLS on. */
  application: ['TEMPORAL_TLS_CA_FILE', 'TEMPORAL_TLS_CERT_FILE', 'TEMPORAL_TLS_KEY_FILE', 'TEMPORAL_TLS_SERVER_NAME'],
} as const;

function clientTls(certificates: StackCertificates | undefined, client: keyof typeof CLIENT_TLS_VARIABLES): Record<string, string> {
  if (!certificates) return {};
  const [ca, cert, key, serverName] = CLIENT_TLS_VARIABLES[client];
  return {
    ...(client === 'application' ? { TEMPORAL_TLS: 'true' } : {}),
    [ca]: certificates.ca,
    [cert]: certificates.client.cert,
    [key]: certificates.client.key,
    [serverName]: certificates.serverName,
  };
}

function temporalServices(context: TopologyContext): ProcessSpec[] {
  const { compose, ports, certificates } = context;
  const temporal = service(compose, 'temporal');
  const env = temporal.environment ?? {};
  const shared: Record<string, string> = {
    ...relocated(env, ports),
    POSTGRES_SEEDS: '127.0.0.1',
    DB_PORT: String(ports.postgres),
    BIND_ON_IP: '127.0.0.1',
    DYNAMIC_CONFIG_FILE_PATH: mountedFile(temporal, env.DYNAMIC_CONFIG_FILE_PATH ?? ''),
    FRONTEND_GRPC_PORT: String(ports.frontend.grpc),
    FRONTEND_HTTP_PORT: String(ports.frontend.http),
    FRONTEND_MEMBERSHIP_PORT: String(ports.frontend.membership),
    MATCHING_GRPC_PORT: String(ports.matching.grpc),
    MATCHING_MEMBERSHIP_PORT: String(ports.matching.membership),
    WORKER_GRPC_PORT: String(ports.worker.grpc),
    WORKER_MEMBERSHIP_PORT: String(ports.worker.membership),
    HISTORY_GRPC_PORT: String(ports.history[0].grpc),
    HISTORY_MEMBERSHIP_PORT: String(ports.history[0].membership),
    ...(certificates ? temporalServerTls(certificates) : {}),
  };
  const temporalProcess = (role: string, name: string, own: TemporalServicePorts, extra: Record<string, string> = {}): ProcessSpec => ({
    name,
    service: 'temporal',
    command: context.temporal.server,
    // The image runs `temporal-server start` (every service in one process, configured by the variables above).
    args: ['start', '--service', role],
    env: { ...shared, ...extra, PROMETHEUS_ENDPOINT: `127.0.0.1:${own.metrics}` },
    stopGraceMs: 30_000,
    ready: { port: own.grpc },
  });
  const several = ports.history.length > 1;
  return [
    ...ports.history.map((own, index) =>
      temporalProcess('history', several ? `temporal-history-${index + 1}` : 'temporal-history', own, {
        HISTORY_GRPC_PORT: String(own.grpc),
        HISTORY_MEMBERSHIP_PORT: String(own.membership),
      }),
    ),
    temporalProcess('matching', 'temporal-matching', ports.matching),
    temporalProcess('frontend', 'temporal-frontend', ports.frontend),
    temporalProcess('worker', 'temporal-worker', ports.worker),
  ];
}

/** The application's environment for one Compose service, made local. */
function applicationEnv(context: TopologyContext, name: string, local: Record<string, string>): Record<string, string> {
  const env = relocated(service(context.compose, name).environment, context.ports);
  return {
    ...env,
    HOST: '127.0.0.1',
    TEMPORAL_UI_URL: `http://127.0.0.1:${context.ports.ui}`,
    PUBLIC_URL: `http://127.0.0.1:${context.ports.balancer}`,
    ALLOW_INSECURE_WEBHOOK_URLS: 'true',
    ...clientTls(context.certificates, 'application'),
    ...local,
  };
}

/** `node [options] dist/src/main.js <role>` of the Compose service, run with this machine's node. */
function applicationProcess(
  context: TopologyContext,
  serviceName: string,
  name: string,
  env: Record<string, string>,
  ready?: ProcessSpec['ready'],
): ProcessSpec {
  const composeService = service(context.compose, serviceName);
  const [program, ...args] = composeService.command ?? [];
  if (program !== 'node') throw new Error(`docker-compose.yml: ${serviceName} no longer runs node`);
  return {
    name,
    service: serviceName,
    command: context.node,
    args,
    env,
    stopGraceMs: durationMs(composeService.stop_grace_period, 10_000),
    ...(ready ? { ready } : {}),
  };
}

/**
 * The loopback address Caddy connects to the API replicas from, and the only one whose X-Forwarded-* they believe
 * (TRUST_PROXY). Every other process of this host connects from 127.0.0.1; in Compose, Caddy has an address of its
 * own on the network for the same reason.
 */
export const PROXY_SOURCE_ADDRESS = '127.0.0.2';

/**
 * Compose's Caddyfile with what one host needs instead of a container network: the API replicas by address (Compose
 * finds them by the service name's DNS records), reached from PROXY_SOURCE_ADDRESS, and a listener on loopback.
 * Anything else in the file changes nothing here; a change to the three places below fails loudly (and
 * test/deploy/stack.test.ts with it).
 */
export function localCaddyfile(composeCaddyfile: string, listenPort: number, upstreams: string[]): string {
  const replace = (text: string, pattern: RegExp, replacement: string, what: string) => {
    if (!pattern.test(text)) throw new Error(`deploy/caddy/Caddyfile: ${what} not found; stack/topology.ts must follow it`);
    return text.replace(pattern, replacement);
  };
  let text = replace(composeCaddyfile, /^(\s*)admin off$/m, '$1admin off\n$1default_bind 127.0.0.1', 'the global `admin off`');
  text = replace(text, /^:80 \{$/m, `:${listenPort} {`, 'the site `:80 {`');
  return replace(
    text,
    /^(\s*)dynamic a api 3000 \{\n[^}]*\}$/m,
    [`$1to ${upstreams.join(' ')}`, '$1transport http {', `$1\tlocal_address ${PROXY_SOURCE_ADDRESS}`, '$1}'].join('\n'),
    'the upstreams `dynamic a api 3000 { … }`',
  );
}

/**
 * Where the Temporal UI server listens on the stack, behind its guard: a loopback address of its own, not 127.0.0.1.
 * Browsers keep cookies per host name whatever the port, so on 127.0.0.1 a login begun at the UI server's own port
 * (with a returnUrl the guard refuses) would set the cookies that the guard's login callback then trusts. In Compose
 * nothing but the guard reaches it (deploy/temporal-ui/base.yaml).
 */
export const UI_SERVER_ADDRESS = '127.0.0.3';

/** Caddy keeps its own state under these; not in the user's home. */
function caddyHome(dir: string): Record<string, string> {
  return { HOME: dir, XDG_DATA_HOME: path.join(dir, 'caddy'), XDG_CONFIG_HOME: path.join(dir, 'caddy') };
}

export function stackTopology(context: TopologyContext): Topology {
  const { compose, ports, certificates, shell } = context;
  const postgres = service(compose, 'postgres');
  const initScripts = (postgres.volumes ?? [])
    .map((volume) => volume.split(':')[1])
    .filter((target) => target?.startsWith('/docker-entrypoint-initdb.d/'))
    .sort()
    .map((target) => mountedFile(postgres, target));

  const schemaJob = service(compose, 'temporal-schema');
  const namespaceJob = service(compose, 'temporal-namespace');
  const proxy = service(compose, 'proxy');
  const uiGuard = service(compose, 'temporal-ui-guard');
  const uiRoot = path.join(context.stateDir, 'temporal-ui');
  const caddyfilePath = path.join(context.stateDir, 'Caddyfile');
  const temporal = temporalServices(context);
  const local = (port: number) => `127.0.0.1:${port}`;
  const oidcIssuer = `http://127.0.0.1:${ports.oidc}`;
  const uiCallback = `http://127.0.0.1:${ports.ui}/auth/sso/callback`;

  return {
    postgres: {
      port: ports.postgres,
      settings: postgresSettings(postgres.command),
      initScripts,
      initEnv: { ...(postgres.environment ?? {}), PATH: shell.PATH },
    },
    temporalSchema: scriptJob(compose, 'temporal-schema', {
      ...(schemaJob.environment ?? {}),
      POSTGRES_SEEDS: '127.0.0.1',
      DB_PORT: String(ports.postgres),
      // Where the admin-tools image has /etc/temporal/schema: the module's schemas, copied beside the build.
      TEMPORAL_SCHEMA_DIR: context.temporal.schemaDir,
      PATH: `${context.temporal.bin}:${shell.PATH}`,
    }),
    temporal,
    temporalNamespace: scriptJob(compose, 'temporal-namespace', {
      ...relocated(namespaceJob.environment, ports),
      ...clientTls(certificates, 'cli'),
      PATH: `${path.dirname(context.temporalCli)}:${shell.PATH}`,
      HOME: shell.HOME,
    }),
    oidcProvider: applicationProcess(
      context,
      'oidc-provider',
      'oidc-provider',
      {
        ...(service(compose, 'oidc-provider').environment ?? {}),
        HOST: '127.0.0.1',
        PORT: String(ports.oidc),
        OIDC_ISSUER: oidcIssuer,
        OIDC_REDIRECT_URI: uiCallback,
        OIDC_SIGNING_KEY_FILE: path.join(context.stateDir, 'secrets', 'oidc-signing-key.json'),
      },
      { url: `${oidcIssuer}/.well-known/openid-configuration` },
    ),
    temporalUi: {
      name: 'temporal-ui',
      service: 'temporal-ui',
      command: context.temporalUi.server,
      // As the image starts it (`ui-server --env docker start`), from a folder whose config/ holds the image's
      // template and a base.yaml with the stack's listen address for it.
      args: ['--root', uiRoot, '--config', 'config', '--env', 'docker', 'start'],
      files: [{ path: path.join(uiRoot, 'config', 'base.yaml'), content: `host: ${UI_SERVER_ADDRESS}\n` }],
      copies: [{ path: path.join(uiRoot, 'config', 'docker.yaml'), from: path.join(context.temporalUi.root, 'config', 'docker.yaml') }],
      env: {
        ...relocated(service(compose, 'temporal-ui').environment, ports),
        TEMPORAL_UI_PORT: String(ports.uiServer),
        TEMPORAL_AUTH_PROVIDER_URL: oidcIssuer,
        TEMPORAL_AUTH_CALLBACK_URL: uiCallback,
        ...clientTls(certificates, 'ui'),
      },
      stopGraceMs: 10_000,
      ready: { url: `http://${UI_SERVER_ADDRESS}:${ports.uiServer}/healthz` },
    },
    temporalUiGuard: {
      name: 'temporal-ui-guard',
      service: 'temporal-ui-guard',
      command: context.caddy.caddy,
      args: ['run', '--adapter', 'caddyfile', '--config', mountedFile(uiGuard, '/etc/caddy/Caddyfile')],
      env: {
        ...(uiGuard.environment ?? {}),
        TEMPORAL_UI_GUARD_BIND: '127.0.0.1',
        TEMPORAL_UI_GUARD_PORT: String(ports.ui),
        TEMPORAL_UI_UPSTREAM: `${UI_SERVER_ADDRESS}:${ports.uiServer}`,
        TEMPORAL_UI_URL: `http://127.0.0.1:${ports.ui}`,
        ...caddyHome(path.join(context.stateDir, 'temporal-ui-guard')),
      },
      stopGraceMs: 10_000,
      ready: { url: `http://127.0.0.1:${ports.ui}/healthz` },
    },
    migrate: applicationProcess(context, 'migrate', 'migrate', {
      ...applicationEnv(context, 'migrate', {}),
      // The documented way to create the first staff user (docs/operations.md#the-first-staff-user): the migrate job with these two.
      ADMIN_USERNAME: context.staff.username,
      ADMIN_PASSWORD: context.staff.password,
    }),
    // Ready as Compose's health check says for the API; a delivery replica once its metrics listener answers.
    api: ports.api.map((port, index) =>
      applicationProcess(context, 'api', `api-${index + 1}`, applicationEnv(context, 'api', { PORT: String(port), TRUST_PROXY: PROXY_SOURCE_ADDRESS }), {
        url: `http://127.0.0.1:${port}/healthz`,
      }),
    ),
    delivery: ports.delivery.map((port, index) =>
      applicationProcess(context, 'delivery', `delivery-${index + 1}`, applicationEnv(context, 'delivery', { METRICS_PORT: String(port) }), {
        port,
      }),
    ),
    proxy: {
      name: 'proxy',
      service: 'proxy',
      command: context.caddy.caddy,
      args: ['run', '--adapter', 'caddyfile', '--config', caddyfilePath],
      env: caddyHome(context.stateDir),
      stopGraceMs: 10_000,
      ready: { url: `http://127.0.0.1:${ports.balancer}/healthz` },
      caddyfilePath,
      caddyfile: localCaddyfile(
        readFileSync(mountedFile(proxy, '/etc/caddy/Caddyfile'), 'utf8'),
        ports.balancer,
        ports.api.map((port) => `127.0.0.1:${port}`),
      ),
    },
    ...observabilityTopology({
      compose,
      ports,
      jaeger: context.jaeger,
      prometheus: context.prometheus,
      alertmanager: context.alertmanager,
      stateDir: context.stateDir,
      scrapeTargets: {
        api: ports.api.map(local),
        delivery: ports.delivery.map(local),
        temporal: temporal.map((spec) => spec.env.PROMETHEUS_ENDPOINT),
      },
    }),
  };
}
