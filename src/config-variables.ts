import path from 'node:path';
import { z } from 'zod';

/*
 * Every environment variable the service reads, with its type, default, limits and meaning: the one list. src/config.ts
 * turns it into the typed configuration; docs/configuration.md is generated from it (`npm run docs:config`), and
 * .env.example and docker-compose.yml follow it. A new setting is one entry here, its meaning in `.describe()`.
 */

/** The repository root, so that relative defaults do not depend on the working directory. */
export const projectRoot = path.resolve(__dirname, __dirname.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..');

/** The spellings a yes/no setting accepts. */
export const FLAG_VALUES = ['true', 'false', '1', '0', 'yes', 'no'] as const;

const booleanFlag = z
  .enum(FLAG_VALUES)
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** What OTEL_TRACES_EXPORTER may name: one exporter (the specification's lists of several are not supported). */
export const TRACE_EXPORTERS = ['otlp', 'console', 'none'] as const;

/** OTLP over HTTP only: gRPC would load a second gRPC stack beside the Temporal client's for no gain here. */
export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const;

/** The specification's built-in samplers. */
export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

/** Exactly these: a typo such as `Production` or `prod` must not start a production instance with development rules. */
const NODE_ENVIRONMENTS = ['development', 'test', 'production'] as const;

export const environmentSchema = z.object({
  NODE_ENV: z
    .enum(NODE_ENVIRONMENTS, { error: `must be one of ${NODE_ENVIRONMENTS.join(', ')}` })
    .default('development')
    .describe(
      'Exactly `development`, `test` or `production` (anything else does not start). `production` creates no demo data, ' +
        'accepts only HTTPS webhook URLs on public addresses, and requires PUBLIC_URL, JWT_SECRETS (or JWT_SECRET), SECRETS_KEYS ' +
        'and METRICS_TOKEN (docs/secrets.md#the-secrets-production-needs).',
    ),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000).describe('HTTP port of the API.'),
  // Loopback unless told otherwise: a development machine does not offer its API (and demo data) to the network.
  HOST: z.string().default('127.0.0.1').describe('Interface the API listens on (the Compose stack sets `0.0.0.0`).'),
  // Checked and parsed by src/config.ts (src/shared/trusted-proxy-list.ts).
  TRUST_PROXY: z
    .string()
    .default('')
    .describe(
      'The reverse proxies in front of the API, by address or CIDR range, comma-separated (`172.30.0.10`, ' +
        '`10.0.0.0/8,fd00::/8`): only their `X-Forwarded-For/-Host/-Proto` are believed (Compose: Caddy\'s fixed ' +
        'address). Unset or `0`: none. A bare count of hops, the old form, is refused at start ' +
        '(docs/api.md#every-operation-read-api-tokens-platform-admin-probes).',
    ),
  PUBLIC_URL: z
    .string()
    .optional()
    .describe(
      'The origin clients reach the API at, `http(s)://host[:port]` and nothing more: every link the API returns ' +
        '(`next`, `previous`) is built from it, never from a request\'s Host. Unset: `http://localhost` and the port a ' +
        'request came in on, what the start command prints; required in production (docs/api.md#crmcontacts).',
    ),
  REQUEST_HEADERS_TIMEOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(300)
    .default(30)
    .describe('How long a client may take to send its request line and headers; then 408 in JSON and the connection closes.'),
  REQUEST_BODY_TIMEOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(60)
    .default(30)
    .describe('How long a client may take to send a body once its headers are in; then 408 in JSON and the connection closes.'),
  DATABASE_URL: z
    .string()
    .url()
    .optional()
    .describe('Any Postgres, e.g. `postgres://user:pass@db:5432/donations`. Unset: the embedded Postgres in DATA_DIR.'),
  EMBEDDED_POSTGRES_PORT: z.coerce.number().int().min(1).max(65535).default(54329).describe('Port of the embedded Postgres.'),
  DATA_DIR: z
    .string()
    .default(path.join(projectRoot, '.data'))
    .describe(
      'The embedded Postgres and Temporal state and the generated local secrets (folder 0700, files 0600; ' +
        'docs/embedded-default.md).',
    ),
  TEMPORAL_ADDRESS: z.string().optional().describe('The Temporal frontend, `host:port`, e.g. `temporal:7233`. Unset: the embedded dev server.'),
  TEMPORAL_NAMESPACE: z.string().default('default').describe('The Temporal namespace.'),
  // Temporal refuses a dot in a Worker Deployment's name.
  TEMPORAL_TASK_QUEUE: z
    .string()
    .regex(/^[^.]+$/, 'must not contain a dot (it names the Worker Deployment, docs/deploying.md)')
    .default('webhook-delivery')
    .describe(
      "The task queue the delivery workers poll and the relay starts workflows on; also the name of the workers' " +
        'Worker Deployment. One per deployment (database) on a shared namespace: a start on a queue another ' +
        'installation polls is refused (docs/delivery.md#event-ids-and-installations).',
    ),
  BUILD_ID: z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe(
      'The release a `worker` or `delivery` process serves (its Worker Deployment Version). Unset: what `npm run build` ' +
        'wrote into `dist/build-id`, `<version>+<commit>` or `<version>+wf-<hash of the workflow code>` (docs/deploying.md).',
    ),
  TEMPORAL_WORKER_VERSIONING: booleanFlag
    .default(true)
    .describe(
      '`false`: the `worker` and `delivery` roles run unversioned (a Temporal server before 1.29); `npm start` always ' +
        'does (docs/delivery.md#releases-and-running-workflows).',
    ),
  TEMPORAL_DEV_SERVER_PORT: z.coerce.number().int().min(1).max(65535).default(7233).describe('Port of the embedded Temporal dev server.'),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8233).describe("Port of the embedded dev server's Web UI."),
  TEMPORAL_UI_URL: z
    .string()
    .url()
    .optional()
    .describe("Where the admin page links workflows to. Unset: the embedded dev server's UI."),
  TEMPORAL_CLI_PATH: z
    .string()
    .optional()
    .describe(
      "The Temporal CLI that `npm start` runs as its dev server. Unset: `.tools/venv/bin/temporal` (`npm run tools`), " +
        "else the SDK's own download.",
    ),
  TEMPORAL_TEST_SERVER_PATH: z
    .string()
    .optional()
    .describe(
      "The tests' time-skipping Temporal test server. Unset: `.tools/venv/bin/temporal-test-server` (`npm run tools`), " +
        "else the SDK's own download.",
    ),
  TEMPORAL_MAX_CACHED_WORKFLOWS: z
    .coerce.number()
    .int()
    .min(0)
    .optional()
    .describe(
      'Workflows a worker keeps in memory (bounds its memory with many events in backoff); at least its workflow task ' +
        'slots (100 + pollers), or the worker does not start. Unset: 250.',
    ),
  // The SDK needs two: one for the task queue, one for the worker's sticky queue.
  TEMPORAL_WORKFLOW_TASK_POLLERS: z
    .coerce.number()
    .int()
    .min(2)
    .max(1000)
    .optional()
    .describe(
      'Workflow task pollers of a worker, each with a slot of its own beside the 100 for attempts ' +
        '(docs/delivery.md#running-it). Unset: 50.',
    ),
  // The files are read and checked at start by src/temporal/connection.ts.
  TEMPORAL_TLS: booleanFlag
    .optional()
    .describe(
      'TLS to the Temporal frontend, for every connection of the service (worker, relay, API, schedules). Unset: on ' +
        'when any TEMPORAL_TLS_* setting or TEMPORAL_API_KEY is set; `false` beside one of them does not start ' +
        '(docs/temporal-tls.md).',
    ),
  TEMPORAL_TLS_CA_FILE: z
    .string()
    .optional()
    .describe("PEM file of the CA that signed the frontend's certificate (a cluster of your own). Unset: the system's roots (Temporal Cloud)."),
  TEMPORAL_TLS_CERT_FILE: z
    .string()
    .optional()
    .describe(
      'mTLS: the client certificate (PEM, intermediates after it); always with TEMPORAL_TLS_KEY_FILE. Checked at start: ' +
        'a readable regular file, PEM, the pair matching, not expired.',
    ),
  TEMPORAL_TLS_KEY_FILE: z
    .string()
    .optional()
    .describe('mTLS: the unencrypted private key of TEMPORAL_TLS_CERT_FILE (PEM); a key file others may read is warned about.'),
  TEMPORAL_TLS_SERVER_NAME: z
    .string()
    .optional()
    .describe("The name the frontend's certificate must be valid for (and SNI). Unset: the host of TEMPORAL_ADDRESS."),
  TEMPORAL_API_KEY: z
    .string()
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces (check for a line break copied with it)')
    .optional()
    .describe(
      'A Temporal Cloud API key, sent as `authorization: Bearer <key>` over TLS; never logged. TLS settings and the ' +
        'key need TEMPORAL_ADDRESS (the embedded dev server speaks plain text).',
    ),
  JWT_SECRETS: z
    .string()
    .transform((list) => list.split(',').map((secret) => secret.trim()).filter((secret) => secret !== ''))
    .pipe(z.array(z.string().min(32, 'each secret in JWT_SECRETS must be at least 32 characters')))
    .optional()
    .describe(
      'HS256 token keys, comma-separated, each at least 32 characters: the first signs new tokens, all verify ' +
        '(rotation: docs/secrets.md#jwt_secrets-api-tokens). Required in production (or JWT_SECRET). Unset outside ' +
        'production: one key generated once into DATA_DIR.',
    ),
  JWT_SECRET: z
    .string()
    .min(32, 'JWT_SECRET must be at least 32 characters')
    .optional()
    .describe(
      'Legacy one-key form of JWT_SECRETS, for existing deployments; when both are set it must be one of JWT_SECRETS.',
    ),
  SECRETS_KEYS: z
    .string()
    .optional()
    .describe(
      "Keys that encrypt the webhook endpoint's password and signing secret at rest, comma-separated, each " +
        '`openssl rand -hex 32`: the first encrypts, all decrypt (src/secrets/keyring.ts; rotation: ' +
        'docs/secrets.md#secrets_keys-the-endpoints-secrets-at-rest). Required in production. Unset outside ' +
        'production: one key generated once into DATA_DIR.',
    ),
  LOGIN_MAX_FAILURES_PER_CLIENT_AND_USERNAME: z
    .coerce.number()
    .int()
    .min(1)
    .default(10)
    .describe(
      'Failed password checks (token creation, HTTP Basic) of one user name from one client address per window ' +
        'before that pair gets 429; correct passwords are never counted (docs/api.md#authentication).',
    ),
  LOGIN_FREE_FAILURES_PER_USERNAME: z
    .coerce.number()
    .int()
    .min(0)
    .default(10)
    .describe(
      'Failed checks of a user name from all addresses in the window before each further check of it, by an address ' +
        'that never signed in with it, waits (0.25 s, doubling, up to LOGIN_MAX_DELAY_SECONDS); never a refusal.',
    ),
  LOGIN_MAX_DELAY_SECONDS: z.coerce.number().min(0).max(60).default(5).describe('The longest such wait.'),
  LOGIN_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(15 * 60).describe('The window the failed checks are counted in.'),
  LOGIN_MAX_FAILURES_PER_CLIENT: z
    .coerce.number()
    .int()
    .min(1)
    .default(30)
    .describe(
      'Failed checks per window from one client address, over the user names it never signed in with, before it gets ' +
        '429 for them.',
    ),
  LOGIN_MAX_CONCURRENT_CHECKS: z
    .coerce.number()
    .int()
    .min(1)
    .max(64)
    .default(2)
    .describe(
      'Password checks (scrypt) at once per process; more wait in line, known clients first (raise only with ' +
        '`UV_THREADPOOL_SIZE`).',
    ),
  LOGIN_REMEMBER_SECONDS: z
    .coerce.number()
    .int()
    .min(0)
    .max(3600)
    .default(60)
    .describe(
      'How long a process takes credentials it verified as right without scrypt, while the account is unchanged; ' +
        '`0`: never.',
    ),
  SESSION_MAX_DAYS: z
    .coerce.number()
    .int()
    .min(1)
    .max(365)
    .default(30)
    .describe(
      'How long a session (a sign-in and the refresh tokens rotated from it) lasts at most, however often it is ' +
        'refreshed (docs/api.md#sessions-one-sign-in-and-the-refresh-tokens-rotated-from-it).',
    ),
  ADMIN_USERNAME: z
    .string()
    .min(1)
    .default('admin')
    .describe('The staff user the embedded default creates, and the `migrate` role with ADMIN_PASSWORD (docs/operations.md#the-first-staff-user).'),
  ADMIN_PASSWORD: z
    .string()
    .min(8)
    .optional()
    .describe('Its password. Unset: `npm start` generates one into `DATA_DIR/admin-password.txt`; `migrate` creates no user.'),
  SEED_DEMO_DATA: booleanFlag
    .optional()
    .describe('Seed demo donors, donations, sign-ups and a shop order (docs/demo.md). Unset: `true` unless NODE_ENV is `production`.'),
  PLATFORM_CART_LOGIC: booleanFlag.default(true).describe("The shop's cart logic; payload version `v2.1` needs it."),
  PLATFORM_IS_STAGING: booleanFlag.default(false).describe('Live events carry environment `stage` instead of `prod`.'),
  PLATFORM_INVOICE_REFERENCE_MODE: z
    .enum(['qr', 'text', 'purpose'])
    .default('qr')
    .describe('Reference on QR invoices: `qr` (27-digit QR reference), `text` (PLATFORM_INVOICE_REFERENCE_TEXT) or `purpose`.'),
  PLATFORM_INVOICE_REFERENCE_TEXT: z
    .string()
    .min(1)
    .max(140)
    .optional()
    .describe('The fixed text for mode `text`; required with it.'),
  ALLOW_INSECURE_WEBHOOK_URLS: booleanFlag
    .optional()
    .describe('Development only: allow `http://` and non-public subscriber addresses. Unset: `true` unless NODE_ENV is `production`.'),
  DELIVERY_STUCK_AFTER_MINUTES: z
    .coerce.number()
    .int()
    .min(1)
    .max(7 * 24 * 60)
    .default(15)
    .describe(
      'An event waiting without an attempt (since its delivery started, or since it was created while the relay has ' +
        'not started it), or failed with its next attempt overdue, for longer than this is shown as stuck: admin ' +
        'page, `stuck=true` filter, metric `webhook_events_stuck` and its alert (src/delivery-rules/stuck-events.ts, ' +
        'docs/admin.md#stuck-events).',
    ),
  ENDPOINT_FAILING_AFTER_MINUTES: z
    .coerce.number()
    .int()
    .min(1)
    .max(7 * 24 * 60)
    .default(30)
    .describe(
      'When every delivery attempt to the endpoint has failed for this long (no attempt delivered since the first ' +
        'failed one), the endpoint is shown as failing: metric `webhook_endpoint_failing`, alert ' +
        '`WebhookEndpointFailing` and a banner on the admin page (docs/observability.md#the-endpoint-keeps-failing).',
    ),
  STAFF_PASSWORD: z
    .string()
    .optional()
    .describe('Read by `npm run users` and `npm run create-staff-user` only (never from argv, where `ps` would show it).'),
  METRICS_PORT: z
    .coerce.number()
    .int()
    .min(1)
    .max(65535)
    .optional()
    .describe(
      '`/metrics` listener of the `delivery`, `worker` and `relay` roles (the API serves `/metrics` itself); with it the ' +
        "worker roles add the Temporal SDK's worker metrics (docs/observability.md#watching-temporal). Unset: no listener.",
    ),
  METRICS_TOKEN: z
    .string()
    .min(16, 'METRICS_TOKEN must be at least 16 characters')
    .optional()
    .describe('When set, `/metrics` answers only `Authorization: Bearer <METRICS_TOKEN>`. Required in production.'),
  EVENT_RETENTION_DAYS: z
    .coerce.number()
    .int()
    .min(1)
    .max(36_500)
    .default(90)
    .describe(
      'Days an ended delivery (delivered, max retries reached) is kept with its attempts before the nightly purge ' +
        'deletes it; from when, and what is never deleted: docs/retention.md.',
    ),
  PAYLOAD_RETENTION_DAYS: z
    .coerce.number()
    .int()
    .min(1)
    .max(36_500)
    .optional()
    .describe('Days such an event keeps its payload and response bodies; at most EVENT_RETENTION_DAYS. Unset: EVENT_RETENTION_DAYS.'),
  WEBHOOK_SEND_TRACEPARENT: booleanFlag
    .default(false)
    .describe(
      'Send the delivery attempt\'s W3C `traceparent` header (never a caller\'s `tracestate`) to the subscriber, so that its own traces ' +
        'join the donation\'s; only while tracing is on (OTEL_TRACES_EXPORTER). Off: the subscriber learns nothing of our ' +
        'traces (docs/observability.md#traces).',
    ),
  OTEL_TRACES_EXPORTER: z
    .enum(TRACE_EXPORTERS, { error: `must be one of ${TRACE_EXPORTERS.join(', ')} (one exporter)` })
    .optional()
    .describe(
      'Tracing: `otlp` exports spans to OTEL_EXPORTER_OTLP_ENDPOINT, `console` prints them (local debugging). Unset or ' +
        '`none`: no tracing, and nothing of OpenTelemetry is loaded (docs/observability.md#traces).',
    ),
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .string()
    .url()
    .regex(/^https?:\/\//i, 'must be an http:// or https:// URL')
    .default('http://localhost:4318')
    .describe('The OTLP/HTTP receiver (a collector, Jaeger); spans go to its `/v1/traces`.'),
  OTEL_EXPORTER_OTLP_PROTOCOL: z
    .enum(OTLP_PROTOCOLS, { error: `must be one of ${OTLP_PROTOCOLS.join(', ')} (gRPC is not supported)` })
    .default('http/protobuf')
    .describe('`http/protobuf` or `http/json`.'),
  OTEL_SERVICE_NAME: z
    .string()
    .min(1)
    .optional()
    .describe('The spans\' `service.name`. Unset: `donation-webhooks-<role>` (`donation-webhooks-api`, `-delivery`, …).'),
  OTEL_RESOURCE_ATTRIBUTES: z
    .string()
    .regex(/^[^=,\s]+=[^,]*(,[^=,\s]+=[^,]*)*$/, 'must be key=value pairs, comma-separated (values percent-encoded)')
    .optional()
    .describe('More resource attributes on every span, `deployment.environment.name=prod,service.namespace=donations`.'),
  OTEL_TRACES_SAMPLER: z
    .enum(TRACE_SAMPLERS, { error: `must be one of ${TRACE_SAMPLERS.join(', ')}` })
    .default('parentbased_always_on')
    .describe(
      'Which traces are kept: `parentbased_traceidratio` with OTEL_TRACES_SAMPLER_ARG `0.1` keeps one in ten platform ' +
        'calls, and everything their deliveries do with them (docs/observability.md#sampling).',
    ),
  OTEL_TRACES_SAMPLER_ARG: z.coerce
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe('The ratio of the `traceidratio` samplers, 0 to 1. Unset: 1.'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('The pino log level.'),
});

export type Environment = z.infer<typeof environmentSchema>;
