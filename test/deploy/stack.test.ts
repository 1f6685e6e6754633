import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import { readProviderSettings } from '../../src/oidc-provider/settings';
import { FRONTEND_SERVER_NAME, type StackCertificates } from '../../stack/certificates';
import { composeAsWritten, imageVersion, loadCompose, mountedFile, requiredVariables } from '../../stack/compose-file';
import { allPorts, MAX_MEMBERSHIP_PORT, planPorts, type PortPlan } from '../../stack/ports';
import { parse } from 'yaml';
import { localArgs } from '../../stack/observability-topology';
import { alertmanagerTools, caddyTools, jaegerTools, prometheusTools, temporalServerTools, temporalUiTools } from '../../stack/tools';
import { LOCAL_CHANGES, localCaddyfile, PROXY_SOURCE_ADDRESS, type ProcessSpec, stackTopology, type Topology, UI_SERVER_ADDRESS } from '../../stack/topology';

// `npm run stack` and docker-compose.yml describe one topology: the same services, roles, commands and settings.
// The stack reads them from the Compose file; these tests pin what it may change (LOCAL_CHANGES) and fail when the
// two drift apart, e.g. a Compose service the stack does not run, or a setting the stack overrides without saying so.

const root = path.resolve(__dirname, '../..');
const secret = (name: string) => createHash('sha256').update(`stack-test-${name}`).digest('hex');
// The secrets Compose requires, which the stack generates.
const compose = loadCompose(Object.fromEntries(requiredVariables().map((name) => [name, secret(name)])));
const ports: PortPlan = planPorts({ basePort: 47_000, api: 2, delivery: 3, history: 2 });
const certificates: StackCertificates = {
  dir: '/stack/tls',
  ca: '/stack/tls/ca.pem',
  frontend: { cert: '/stack/tls/frontend.pem', key: '/stack/tls/frontend.key' },
  internode: { cert: '/stack/tls/internode.pem', key: '/stack/tls/internode.key' },
  client: { cert: '/stack/tls/client.pem', key: '/stack/tls/client.key' },
  serverName: FRONTEND_SERVER_NAME,
};

function topology(tls: boolean): Topology {
  return stackTopology({
    compose,
    ports,
    temporal: temporalServerTools(imageVersion(compose.services.temporal)),
    temporalUi: temporalUiTools(imageVersion(compose.services['temporal-ui'])),
    caddy: caddyTools(imageVersion(compose.services.proxy)),
    jaeger: jaegerTools(imageVersion(compose.services.jaeger)),
    prometheus: prometheusTools(imageVersion(compose.services.prometheus)),
    alertmanager: alertmanagerTools(imageVersion(compose.services.alertmanager)),
    temporalCli: '/tools/temporal',
    certificates: tls ? certificates : undefined,
    staff: { username: 'admin', password: 'staff-password' },
    node: '/usr/bin/node',
    shell: { PATH: '/usr/bin:/bin', HOME: '/home/someone' },
    stateDir: '/stack',
  });
}

const withTls = topology(true);
const appProcesses = (t: Topology) => [t.migrate, ...t.api, ...t.delivery];
const allProcesses = (t: Topology): ProcessSpec[] => [
  t.temporalSchema,
  ...t.temporal,
  t.temporalNamespace,
  t.oidcProvider,
  t.temporalUi,
  t.temporalUiGuard,
  ...appProcesses(t),
  t.proxy,
  t.jaeger,
  t.prometheus,
  t.alertmanager,
];

test('runs every Compose service that `docker compose up` starts, and nothing else', () => {
  const run = new Set(['postgres', ...allProcesses(withTls).map((spec) => spec.service)]);
  // A service with a profile (delivery-previous, for a deploy) starts only when that profile is asked for.
  const started = Object.entries(compose.services).filter(([, service]) => !service.profiles?.length);
  expect([...run].sort()).toEqual(started.map(([name]) => name).sort());
});

test('runs each application role with the Compose command, on this machine’s node, as many replicas as asked', () => {
  for (const spec of appProcesses(withTls)) {
    expect([spec.command, ...spec.args]).toEqual(['/usr/bin/node', ...(compose.services[spec.service].command ?? []).slice(1)]);
  }
  expect(withTls.api.map((spec) => spec.name)).toEqual(['api-1', 'api-2']);
  expect(withTls.delivery.map((spec) => spec.name)).toEqual(['delivery-1', 'delivery-2', 'delivery-3']);
  // The delivery replicas get Compose's grace period to finish an attempt.
  expect(withTls.delivery[0].stopGraceMs).toBe(45_000);
});

test('gives the application Compose’s settings, changing only the listed ones, and a valid production configuration', () => {
  for (const tls of [true, false]) {
    for (const spec of appProcesses(topology(tls))) {
      const composeEnv = compose.services[spec.service].environment ?? {};
      const jobOnly = spec.name === 'migrate' ? ['ADMIN_USERNAME', 'ADMIN_PASSWORD'] : [];
      const unknown = Object.keys(spec.env).filter((name) => !(name in composeEnv) && !(name in LOCAL_CHANGES.app) && !jobOnly.includes(name));
      expect(unknown).toEqual([]);
      expect(Object.keys(composeEnv).filter((name) => !(name in spec.env))).toEqual([]);
      const unchanged = Object.keys(composeEnv).filter((name) => !(name in LOCAL_CHANGES.app));
      for (const name of unchanged) expect([name, spec.env[name]]).toEqual([name, composeEnv[name]]);

      const config = loadConfig(spec.env);
      expect(config).toMatchObject({ production: true, http: { host: '127.0.0.1' } });
      const database = new URL(config.database.url ?? '');
      const composeDatabase = new URL(composeEnv.DATABASE_URL);
      expect([database.username, database.password, database.pathname]).toEqual([composeDatabase.username, composeDatabase.password, composeDatabase.pathname]);
      expect(database.host).toBe(`127.0.0.1:${ports.postgres}`);
      expect(config.temporal.address).toBe(`127.0.0.1:${ports.frontend.grpc}`);
    }
  }
  expect(withTls.api.map((spec) => Number(spec.env.PORT))).toEqual(ports.api);
  expect(withTls.delivery.map((spec) => Number(spec.env.METRICS_PORT))).toEqual(ports.delivery);
  // Only the API stands behind the proxy whose X-Forwarded-* it believes (Compose sets it there alone).
  // Not 127.0.0.1, where every other process of the host connects from.
  expect(withTls.api[0].env.TRUST_PROXY).toBe(PROXY_SOURCE_ADDRESS);
  expect(withTls.proxy.caddyfile).toContain(`local_address ${PROXY_SOURCE_ADDRESS}`);
  expect(withTls.api[0].env.PUBLIC_URL).toBe(`http://127.0.0.1:${ports.balancer}`);
  expect(withTls.delivery[0].env).not.toHaveProperty('TRUST_PROXY');
});

test('connects the application with mTLS by the settings of src/config.ts, and on --no-tls as Compose does', () => {
  for (const spec of appProcesses(withTls)) {
    expect(spec.env).toMatchObject({
      TEMPORAL_TLS: 'true',
      TEMPORAL_TLS_CA_FILE: certificates.ca,
      TEMPORAL_TLS_CERT_FILE: certificates.client.cert,
      TEMPORAL_TLS_KEY_FILE: certificates.client.key,
      TEMPORAL_TLS_SERVER_NAME: FRONTEND_SERVER_NAME,
    });
  }
  for (const spec of appProcesses(topology(false))) {
    const composeEnv = compose.services[spec.service].environment ?? {};
    const tlsSettings = (env: Record<string, string>) => Object.entries(env).filter(([name]) => name.startsWith('TEMPORAL_TLS'));
    expect(tlsSettings(spec.env)).toEqual(tlsSettings(composeEnv));
  }
});

test('runs Temporal’s services as separate processes of the pinned server, with Compose’s settings and its own ports', () => {
  const composeEnv = compose.services.temporal.environment ?? {};
  expect(withTls.temporal.map((spec) => spec.args)).toEqual(
    ['history', 'history', 'matching', 'frontend', 'worker'].map((service) => ['start', '--service', service]),
  );
  for (const spec of withTls.temporal) {
    expect(spec.command).toBe(temporalServerTools(imageVersion(compose.services.temporal)).server);
    const unchanged = Object.keys(composeEnv).filter((name) => !(name in LOCAL_CHANGES.temporal));
    for (const name of unchanged) expect([name, spec.env[name]]).toEqual([name, composeEnv[name]]);
    expect(spec.env).toMatchObject({ POSTGRES_SEEDS: '127.0.0.1', DB_PORT: String(ports.postgres), BIND_ON_IP: '127.0.0.1' });
    expect(spec.env.DYNAMIC_CONFIG_FILE_PATH).toBe(path.join(root, 'deploy/temporal/dynamicconfig/production-sql.yaml'));
    expect(spec.env).toMatchObject({ TEMPORAL_TLS_REQUIRE_CLIENT_AUTH: 'true', TEMPORAL_TLS_FRONTEND_CERT: certificates.frontend.cert });
  }
  const [first, second] = withTls.temporal;
  expect([first.env.HISTORY_GRPC_PORT, second.env.HISTORY_GRPC_PORT]).toEqual(ports.history.map((own) => String(own.grpc)));
  expect(topology(false).temporal.every((spec) => !('TEMPORAL_TLS_FRONTEND_CERT' in spec.env))).toBe(true);
});

test('runs Temporal UI as the image does, with Compose’s settings and the client certificate', () => {
  const { temporalUi } = withTls;
  const ui = temporalUiTools(imageVersion(compose.services['temporal-ui']));
  expect([temporalUi.command, ...temporalUi.args]).toEqual([ui.server, '--root', '/stack/temporal-ui', '--config', 'config', '--env', 'docker', 'start']);
  // The image's template, and before it a base.yaml with the stack's listen address: a loopback address of its own.
  expect(temporalUi.copies).toEqual([{ path: '/stack/temporal-ui/config/docker.yaml', from: path.join(ui.root, 'config', 'docker.yaml') }]);
  expect(temporalUi.files).toEqual([{ path: '/stack/temporal-ui/config/base.yaml', content: `host: ${UI_SERVER_ADDRESS}\n` }]);
  expect(UI_SERVER_ADDRESS).toMatch(/^127\./);
  expect(UI_SERVER_ADDRESS).not.toBe('127.0.0.1');
  const composeEnv = compose.services['temporal-ui'].environment ?? {};
  for (const name of Object.keys(composeEnv).filter((key) => !(key in LOCAL_CHANGES.ui))) {
    expect([name, temporalUi.env[name]]).toEqual([name, composeEnv[name]]);
  }
  expect(Object.keys(temporalUi.env).filter((name) => !(name in composeEnv) && !(name in LOCAL_CHANGES.ui))).toEqual([]);
  expect(temporalUi.env).toMatchObject({
    TEMPORAL_ADDRESS: `127.0.0.1:${ports.frontend.grpc}`,
    TEMPORAL_UI_PORT: String(ports.uiServer),
    TEMPORAL_TLS_CERT: certificates.client.cert,
  });
  expect(topology(false).temporalUi.env).not.toHaveProperty('TEMPORAL_TLS_CERT');
  // The application links to it.
  for (const spec of appProcesses(withTls)) expect(spec.env.TEMPORAL_UI_URL).toBe(`http://127.0.0.1:${ports.ui}`);
});

test('puts the guard in front of the Temporal UI, as Compose does: Caddy with its Caddyfile, on the port the UI is reached at', () => {
  const { temporalUi, temporalUiGuard } = withTls;
  const guard = compose.services['temporal-ui-guard'];
  expect([temporalUiGuard.command, ...temporalUiGuard.args]).toEqual([
    caddyTools(imageVersion(guard)).caddy,
    'run',
    '--adapter',
    'caddyfile',
    '--config',
    path.join(root, 'deploy/caddy/temporal-ui-guard.Caddyfile'),
  ]);
  // Compose: in the UI's network namespace, on the published 8080, in front of the UI's 8088; the same read-only switch.
  expect(guard.network_mode).toBe(compose.services['temporal-ui'].network_mode);
  const ui = compose.services['temporal-ui'];
  expect(guard.environment).toMatchObject({ TEMPORAL_UI_GUARD_BIND: '0.0.0.0', TEMPORAL_UI_GUARD_PORT: '8080', TEMPORAL_UI_UPSTREAM: `127.0.0.1:${ui.environment?.TEMPORAL_UI_PORT}` });
  // The UI server listens on loopback only, so that nothing on the Compose network reaches it around the guard.
  expect(readFileSync(mountedFile(ui, '/home/ui-server/config/base.yaml'), 'utf8')).toMatch(/^host: 127\.0\.0\.1$/m);
  expect(guard.environment?.TEMPORAL_DISABLE_WRITE_ACTIONS).toBe(ui.environment?.TEMPORAL_DISABLE_WRITE_ACTIONS);
  // The one absolute return address it lets a login lead to: the UI's, as the UI's callback URL has it.
  expect(`${guard.environment?.TEMPORAL_UI_URL}/auth/sso/callback`).toBe(ui.environment?.TEMPORAL_AUTH_CALLBACK_URL);
  for (const name of Object.keys(guard.environment ?? {}).filter((key) => !(key in LOCAL_CHANGES.uiGuard))) {
    expect([name, temporalUiGuard.env[name]]).toEqual([name, guard.environment?.[name]]);
  }
  // Here: the UI's stack port is the guard's, and the UI server listens on one of its own, which the guard forwards to.
  expect(temporalUiGuard.env).toMatchObject({ TEMPORAL_UI_GUARD_BIND: '127.0.0.1', TEMPORAL_UI_GUARD_PORT: String(ports.ui), TEMPORAL_UI_UPSTREAM: `${UI_SERVER_ADDRESS}:${ports.uiServer}`, TEMPORAL_UI_URL: `http://127.0.0.1:${ports.ui}` });
  expect(temporalUi.env.TEMPORAL_UI_PORT).toBe(String(ports.uiServer));
  expect(temporalUiGuard.ready).toEqual({ url: `http://127.0.0.1:${ports.ui}/healthz` });
});

test('runs the Temporal UI’s login provider with Compose’s command and settings, the UI pointed at it on loopback', () => {
  const { oidcProvider, temporalUi } = withTls;
  const composeEnv = compose.services['oidc-provider'].environment ?? {};
  expect([oidcProvider.command, ...oidcProvider.args]).toEqual(['/usr/bin/node', 'dist/src/oidc-provider/main.js']);
  for (const name of Object.keys(composeEnv).filter((key) => !(key in LOCAL_CHANGES.oidcProvider))) {
    expect([name, oidcProvider.env[name]]).toEqual([name, composeEnv[name]]);
  }
  expect(Object.keys(oidcProvider.env).filter((name) => !(name in composeEnv) && !(name in LOCAL_CHANGES.oidcProvider))).toEqual([]);
  const settings = readProviderSettings(oidcProvider.env);
  expect(settings).toMatchObject({ host: '127.0.0.1', port: ports.oidc, issuer: `http://127.0.0.1:${ports.oidc}` });
  // Its key lives with the generated secrets.
  expect(settings.signingKeyFile).toBe('/stack/secrets/oidc-signing-key.json');
  expect(oidcProvider.ready).toEqual({ url: `${settings.issuer}/.well-known/openid-configuration` });
  // The UI asks that provider, and comes back to itself: the client's one redirect URI.
  expect(temporalUi.env.TEMPORAL_AUTH_PROVIDER_URL).toBe(settings.issuer);
  expect(temporalUi.env.TEMPORAL_AUTH_CALLBACK_URL).toBe(`http://127.0.0.1:${ports.ui}/auth/sso/callback`);
  expect(settings.client).toEqual({
    id: temporalUi.env.TEMPORAL_AUTH_CLIENT_ID,
    secret: temporalUi.env.TEMPORAL_AUTH_CLIENT_SECRET,
    redirectUri: temporalUi.env.TEMPORAL_AUTH_CALLBACK_URL,
  });
  // Compose's defaults: login on, read-only.
  expect(temporalUi.env).toMatchObject({ TEMPORAL_AUTH_ENABLED: 'true', TEMPORAL_DISABLE_WRITE_ACTIONS: 'true' });
});

test('builds one Temporal version for the server and both admin jobs, as Compose pins them', () => {
  const version = imageVersion(compose.services.temporal);
  expect(imageVersion(compose.services['temporal-schema'])).toBe(version);
  expect(imageVersion(compose.services['temporal-namespace'])).toBe(version);
  // Read from the file as written too, so that the runner's defaults (replicas) and the versions cannot disagree.
  expect(composeAsWritten().services.api.deploy?.replicas).toBe(compose.services.api.deploy?.replicas);
});

test('runs the one-off jobs from the same scripts as Compose, with Compose’s settings', () => {
  const script = (spec: ProcessSpec) => path.relative(root, spec.args[0]);
  expect(script(withTls.temporalSchema)).toBe('deploy/temporal/setup-schema.sh');
  expect(script(withTls.temporalNamespace)).toBe('deploy/temporal/ensure-namespace.sh');
  expect(withTls.postgres.initScripts.map((file) => path.relative(root, file))).toEqual(['deploy/postgres/init-databases.sh']);
  expect(withTls.postgres.settings).toEqual({ max_connections: '300' });
  expect(withTls.temporalSchema.env).toMatchObject({
    ...compose.services['temporal-schema'].environment,
    POSTGRES_SEEDS: '127.0.0.1',
    DB_PORT: String(ports.postgres),
  });
  expect(withTls.temporalNamespace.env).toMatchObject({
    TEMPORAL_ADDRESS: `127.0.0.1:${ports.frontend.grpc}`,
    TEMPORAL_NAMESPACE: compose.services['temporal-namespace'].environment?.TEMPORAL_NAMESPACE,
    TEMPORAL_NAMESPACE_RETENTION: compose.services['temporal-namespace'].environment?.TEMPORAL_NAMESPACE_RETENTION,
    // The Temporal CLI's own variables for the client certificate.
    TEMPORAL_TLS_CLIENT_CERT_PATH: certificates.client.cert,
  });
  // The schema script takes the schemas from where the stack put them; the image's path stays the default.
  expect(readFileSync(path.join(root, 'deploy/temporal/setup-schema.sh'), 'utf8')).toContain('${TEMPORAL_SCHEMA_DIR:-/etc/temporal/schema}');
});

test('balances the API replicas with Compose’s Caddyfile, changing only the listener, how it finds the replicas and its source address', () => {
  const composeLines = readFileSync(path.join(root, 'deploy/caddy/Caddyfile'), 'utf8').split('\n');
  const localLines = withTls.proxy.caddyfile.split('\n');
  expect(localLines.filter((line) => !composeLines.includes(line))).toEqual([
    '\tdefault_bind 127.0.0.1',
    `\tto ${ports.api.map((port) => `127.0.0.1:${port}`).join(' ')}`,
    '\ttransport http {',
    `\t\tlocal_address ${PROXY_SOURCE_ADDRESS}`,
    `:${ports.balancer} {`,
  ]);
  expect(withTls.proxy.caddyfile).toContain(`\ttransport http {\n\t\tlocal_address ${PROXY_SOURCE_ADDRESS}\n\t}\n`);
  expect(composeLines.filter((line) => !localLines.includes(line))).toEqual(['\tdynamic a api 3000 {', '\t\trefresh 5s', ':80 {']);
  expect(() => localCaddyfile(':80 {\n\treverse_proxy api:3000\n}\n', 1, ['127.0.0.1:2'])).toThrow(/deploy\/caddy\/Caddyfile/);
});

test('lays out distinct ports, and membership ports that Temporal’s SMALLINT column can store', () => {
  const used = allPorts(ports);
  expect(new Set(used).size).toBe(used.length);
  const membership = [ports.frontend, ports.matching, ports.worker, ...ports.history].map((own) => own.membership);
  expect(Math.max(...membership)).toBeLessThanOrEqual(MAX_MEMBERSHIP_PORT);
  expect(used.filter((port) => !membership.includes(port)).every((port) => port >= 47_000 && port < 48_000)).toBe(true);
  // Below 32767 the membership ports stay in the base's own block, clear of its other ports.
  for (const basePort of [7300, 25_000]) {
    const low = allPorts(planPorts({ basePort, api: 20, delivery: 20, history: 4 }));
    expect(new Set(low).size).toBe(low.length);
    expect(low.every((port) => port >= basePort && port < basePort + 100)).toBe(true);
  }
  expect(() => planPorts({ basePort: 47_000, membershipBasePort: 40_000, api: 1, delivery: 1, history: 1 })).toThrow(/SMALLINT/);
  expect(() => planPorts({ basePort: 7300, api: 21, delivery: 1, history: 1 })).toThrow(/--api/);
  // The alert receiver is the caller's, not the stack's, but in the same block and clear of the stack's ports.
  expect(used).not.toContain(ports.alertReceiver);
  expect(ports.alertReceiver - ports.balancer).toBeLessThan(90);
});

/** A Compose file mounted into a service, as this checkout has it. */
const mounted = (file: string) => readFileSync(path.join(root, file), 'utf8');

test('sends every process’s traces to the stack’s Jaeger, run with Compose’s configuration file on loopback ports', () => {
  const { jaeger } = withTls;
  expect([jaeger.command, ...jaeger.args]).toEqual([jaegerTools('2.13.0').jaeger, '--config', path.join(root, 'deploy/jaeger/config.yaml')]);
  expect(jaegerTools('2.13.0').jaeger).toMatch(/\.tools\/jaeger-1\.76\.0\/bin\/jaeger$/);
  const composeEnv = compose.services.jaeger.environment ?? {};
  expect(Object.keys(jaeger.env).sort()).toEqual([...Object.keys(composeEnv), ...Object.keys(LOCAL_CHANGES.jaeger)].sort());
  for (const [name, value] of Object.entries(composeEnv)) expect([name, jaeger.env[name]]).toEqual([name, value]);
  // Each variable the stack sets is one the configuration reads, with Compose's address as its default.
  const config = mounted('deploy/jaeger/config.yaml');
  for (const name of Object.keys(LOCAL_CHANGES.jaeger)) expect(config).toMatch(new RegExp(`\\$\\{env:${name}:-[^}]+\\}`));
  expect(Object.values(jaeger.env).filter((value) => value.includes(':')).every((value) => value.startsWith('127.0.0.1:'))).toBe(true);

  for (const spec of appProcesses(withTls)) {
    expect(spec.env).toMatchObject({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${ports.jaeger.otlpHttp}` });
    expect(spec.env.OTEL_SERVICE_NAME).toBe(compose.services[spec.service].environment?.OTEL_SERVICE_NAME);
  }
  expect(new Set([...withTls.api, ...withTls.delivery].map((spec) => spec.env.OTEL_SERVICE_NAME))).toEqual(
    new Set(['donation-webhooks-api', 'donation-webhooks-delivery']),
  );
  // The Temporal server exports over gRPC only.
  for (const spec of withTls.temporal) {
    expect(spec.env).toMatchObject({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${ports.jaeger.otlpGrpc}`, OTEL_SERVICE_NAME: 'temporal' });
  }
});

test('runs Prometheus with Compose’s command and prometheus.yml, changing only the targets, the token file, the rule folder and Alertmanager’s address', () => {
  const { prometheus } = withTls;
  const [configFile, tokenFile] = prometheus.files;
  expect([prometheus.command, ...prometheus.args]).toEqual([
    prometheusTools('3.16.0').prometheus,
    `--config.file=${configFile.path}`,
    '--storage.tsdb.path=/stack/prometheus',
    ...(compose.services.prometheus.command ?? []).slice(2),
    `--web.listen-address=127.0.0.1:${ports.prometheus}`,
  ]);
  expect(prometheusTools('3.16.0').prometheus).toMatch(/\.tools\/prometheus-0\.316\.0\/bin\/prometheus$/);
  // Only 3.x releases have a module version; a Jaeger release needs its module version written down.
  expect(() => prometheusTools('2.42.0')).toThrow(/3\.x\.y/);
  expect(() => jaegerTools('2.14.0')).toThrow(/JAEGER_MODULE_VERSIONS/);
  // The token the application's /metrics wants, in a file of its own, not in the environment.
  expect(tokenFile.content).toBe(secret('METRICS_TOKEN'));
  expect(prometheus.env).not.toHaveProperty('METRICS_TOKEN');

  type Job = { job_name: string; static_configs?: Array<{ targets: string[] }>; dns_sd_configs?: unknown; authorization?: { credentials_file: string } };
  const composeConfig = parse(mounted('deploy/prometheus/prometheus.yml')) as { scrape_configs: Job[]; rule_files: string[]; alerting: unknown; global: unknown };
  const localConfig = parse(configFile.content) as typeof composeConfig;
  expect(localConfig.global).toEqual(composeConfig.global);
  expect(localConfig.rule_files).toEqual([path.join(root, 'deploy/prometheus/alerts/*.yml')]);
  expect(localConfig.alerting).toEqual({ alertmanagers: [{ static_configs: [{ targets: [`127.0.0.1:${ports.alertmanager}`] }] }] });
  const targets = Object.fromEntries(localConfig.scrape_configs.map((job) => [job.job_name, job.static_configs?.[0].targets]));
  const local = (port: number) => `127.0.0.1:${port}`;
  expect(targets).toEqual({
    api: ports.api.map(local),
    delivery: ports.delivery.map(local),
    temporal: [...ports.history, ports.matching, ports.frontend, ports.worker].map((own) => local(own.metrics)),
    jaeger: [local(ports.jaeger.metrics)],
    alertmanager: [local(ports.alertmanager)],
    prometheus: [local(ports.prometheus)],
  });
  // The same jobs with the same settings, the token where Compose has one.
  const settings = (jobs: Job[]) => jobs.map(({ static_configs: _static, dns_sd_configs: _dns, authorization, ...rest }) => ({ ...rest, token: Boolean(authorization) }));
  expect(settings(localConfig.scrape_configs)).toEqual(settings(composeConfig.scrape_configs));
  for (const job of localConfig.scrape_configs.filter((each) => each.authorization)) expect(job.authorization?.credentials_file).toBe(tokenFile.path);
  // What Compose's entrypoint does, the stack does: Prometheus' own command line, the token written first.
  expect(mounted('deploy/prometheus/start.sh')).toMatch(/> \/prometheus\/metrics_token\n[\s\S]*exec \/bin\/prometheus "\$@"/);
});

test('runs Alertmanager with Compose’s command and alertmanager.yml, its webhook sent to the stack’s alert receiver', () => {
  const { alertmanager } = withTls;
  const [configFile] = alertmanager.files;
  expect([alertmanager.command, ...alertmanager.args]).toEqual([
    alertmanagerTools('0.25.0').alertmanager,
    `--config.file=${configFile.path}`,
    '--storage.path=/stack/alertmanager',
    '--cluster.listen-address=',
    `--web.listen-address=127.0.0.1:${ports.alertmanager}`,
  ]);
  const composeConfig = parse(mounted('deploy/alertmanager/alertmanager.yml')) as { route: unknown; receivers: Array<{ webhook_configs: Array<{ url: string }> }> };
  const localConfig = parse(configFile.content) as typeof composeConfig;
  expect(localConfig.route).toEqual(composeConfig.route);
  expect(localConfig.receivers[0].webhook_configs[0].url).toBe(`http://127.0.0.1:${ports.alertReceiver}/alerts`);
  expect(() => localArgs(['--storage.path=/alertmanager'], {}, ['--config.file'])).toThrow(/--config.file/);
});
