import path from 'node:path';
import { z } from 'zod';
import { parseTrustedProxies } from './http/trusted-proxies';

/*
 * Every environment variable the service reads, with its type, default and limits: the one list (src/config.ts turns
 * it into the typed configuration; the README's configuration table, .env.example and docker-compose.yml follow it).
 */

/** The repository root, so that relative defaults do not depend on the working directory. */
export const projectRoot = path.resolve(__dirname, __dirname.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..');

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** Exactly these: a typo such as `Production` or `prod` must not start a production instance with development rules. */
const NODE_ENVIRONMENTS = ['development', 'test', 'production'] as const;

export const environmentSchema = z.object({
  NODE_ENV: z.enum(NODE_ENVIRONMENTS, { error: `must be one of ${NODE_ENVIRONMENTS.join(', ')}` }).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  // Loopback unless told otherwise: a development machine does not offer its API (and demo data) to the network.
  HOST: z.string().default('127.0.0.1'),
  // The reverse proxies in front of the API, by address or CIDR range: only their X-Forwarded-* headers are believed.
  TRUST_PROXY: z
    .string()
    .default('')
    .transform((value, ctx) => {
      try {
        return parseTrustedProxies(value);
      } catch (err) {
        ctx.addIssue({ code: 'custom', message: (err as Error).message });
        return z.NEVER;
      }
    }),
  // The origin clients reach the API at (`https://donations.example.org`): every absolute link is built from it, never
  // from the request's Host; checked by src/config.ts. Unset: http://localhost and the port a request came in on
  // (what the start command prints); required in production.
  PUBLIC_URL: z.string().optional(),
  // How long a client may take to send its request line and headers, and then its body (Node's headersTimeout; the
  // body reader's own limit, src/http/body.ts).
  REQUEST_HEADERS_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(300).default(30),
  REQUEST_BODY_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(60).default(30),
  DATABASE_URL: z.string().url().optional(),
  EMBEDDED_POSTGRES_PORT: z.coerce.number().int().min(1).max(65535).default(54329),
  DATA_DIR: z.string().default(path.join(projectRoot, '.data')),
  TEMPORAL_ADDRESS: z.string().optional(),
  TEMPORAL_NAMESPACE: z.string().default('default'),
  // The one task queue the delivery workers poll and the relay starts workflows on; it names their Worker Deployment
  // too, where Temporal refuses a dot.
  TEMPORAL_TASK_QUEUE: z
    .string()
    .regex(/^[^.]+$/, 'must not contain a dot (it names the Worker Deployment, docs/operations.md)')
    .default('webhook-delivery'),
  // The release a delivery worker serves (Worker Versioning); unset: what `npm run build` made of it.
  BUILD_ID: z.string().min(1).max(255).optional(),
  // Whether the worker and delivery roles serve a Worker Deployment Version (a Temporal server before 1.29 has none).
  TEMPORAL_WORKER_VERSIONING: booleanFlag.default(true),
  TEMPORAL_DEV_SERVER_PORT: z.coerce.number().int().min(1).max(65535).default(7233),
  TEMPORAL_UI_PORT: z.coerce.number().int().min(1).max(65535).default(8233),
  TEMPORAL_UI_URL: z.string().url().optional(),
  TEMPORAL_CLI_PATH: z.string().optional(),
  TEMPORAL_TEST_SERVER_PATH: z.string().optional(),
  TEMPORAL_MAX_CACHED_WORKFLOWS: z.coerce.number().int().min(0).optional(),
  // The SDK needs two: one for the task queue, one for the worker's sticky queue.
  TEMPORAL_WORKFLOW_TASK_POLLERS: z.coerce.number().int().min(2).max(1000).optional(),
  // TLS to the Temporal frontend: on when true, or when any setting below is given; the files are read and checked
  // at start by src/temporal/connection.ts (docs/operations.md, "Temporal Cloud and clusters with TLS").
  TEMPORAL_TLS: booleanFlag.optional(),
  // The CA that signed the frontend's certificate; unset: the system's roots (Temporal Cloud).
  TEMPORAL_TLS_CA_FILE: z.string().optional(),
  // mTLS: the client certificate (PEM, intermediates after it) and its unencrypted private key, always together.
  TEMPORAL_TLS_CERT_FILE: z.string().optional(),
  TEMPORAL_TLS_KEY_FILE: z.string().optional(),
  // The name the frontend's certificate must be valid for (and SNI), when it is not the host of TEMPORAL_ADDRESS.
  TEMPORAL_TLS_SERVER_NAME: z.string().optional(),
  // A Temporal Cloud API key, sent as `authorization: Bearer <key>` over TLS.
  TEMPORAL_API_KEY: z
    .string()
    .regex(/^[\x21-\x7e]+$/, 'must be printable ASCII without spaces (check for a line break copied with it)')
    .optional(),
  // The one-key form of JWT_SECRETS, kept for existing deployments; with JWT_SECRETS set it must be one of them.
  JWT_SECRET: z.string().min(32, 'JWT_SECRET must be at least 32 characters').optional(),
  // Comma-separated: the first signs new tokens, every one verifies (rotation without logging anyone out).
  JWT_SECRETS: z
    .string()
    .transform((list) => list.split(',').map((secret) => secret.trim()).filter((secret) => secret !== ''))
    .pipe(z.array(z.string().min(32, 'each secret in JWT_SECRETS must be at least 32 characters')))
    .optional(),
  // Keys of the secrets at rest, comma-separated, the sealing one first (src/secrets/keyring.ts); required in production.
  SECRETS_KEYS: z.string().optional(),
  LOGIN_MAX_FAILURES_PER_CLIENT_AND_USERNAME: z.coerce.number().int().min(1).default(10),
  LOGIN_FREE_FAILURES_PER_USERNAME: z.coerce.number().int().min(0).default(10),
  LOGIN_MAX_DELAY_SECONDS: z.coerce.number().min(0).max(60).default(5),
  LOGIN_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(15 * 60),
  LOGIN_MAX_FAILURES_PER_CLIENT: z.coerce.number().int().min(1).default(30),
  LOGIN_MAX_CONCURRENT_CHECKS: z.coerce.number().int().min(1).max(64).default(2),
  LOGIN_REMEMBER_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
  SESSION_MAX_DAYS: z.coerce.number().int().min(1).max(365).default(30),
  ADMIN_USERNAME: z.string().min(1).default('admin'),
  ADMIN_PASSWORD: z.string().min(8).optional(),
  SEED_DEMO_DATA: booleanFlag.optional(),
  PLATFORM_CART_LOGIC: booleanFlag.default(true),
  PLATFORM_IS_STAGING: booleanFlag.default(false),
  PLATFORM_INVOICE_REFERENCE_MODE: z.enum(['qr', 'text', 'purpose']).default('qr'),
  PLATFORM_INVOICE_REFERENCE_TEXT: z.string().min(1).max(140).optional(),
  ALLOW_INSECURE_WEBHOOK_URLS: booleanFlag.optional(),
  // Minutes after which an event that should have moved on and has not is shown as stuck (src/delivery-rules/stuck-events.ts).
  DELIVERY_STUCK_AFTER_MINUTES: z.coerce.number().int().min(1).max(7 * 24 * 60).default(15),
  // Read by the users and create-staff-user commands only (never from argv, where `ps` would show it).
  STAFF_PASSWORD: z.string().optional(),
  // Port of the /metrics listener of the roles that serve no HTTP API (worker, relay); unset: no listener.
  METRICS_PORT: z.coerce.number().int().min(1).max(65535).optional(),
  // When set, /metrics answers only requests with `Authorization: Bearer <METRICS_TOKEN>`; required in production.
  METRICS_TOKEN: z.string().min(16, 'METRICS_TOKEN must be at least 16 characters').optional(),
  // Retention of ended deliveries in Postgres (src/temporal/retention-schedule.ts, docs/operations.md).
  EVENT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(90),
  PAYLOAD_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).optional(),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
});

export type Environment = z.infer<typeof environmentSchema>;
