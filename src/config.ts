import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { z } from 'zod';
import { generateSecretKey, parseSecretsKeys, type SecretKey } from './secrets/keyring';
import { keyWeakness, secretWeakness } from './secrets/secret-strength';

/** The repository root, so that relative defaults do not depend on the working directory. */
export const projectRoot = path.resolve(__dirname, __dirname.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..');

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

/** Exactly these: a typo such as `Production` or `prod` must not start a production instance with development rules. */
export const NODE_ENVIRONMENTS = ['development', 'test', 'production'] as const;

const environmentSchema = z.object({
  NODE_ENV: z.enum(NODE_ENVIRONMENTS, { error: `must be one of ${NODE_ENVIRONMENTS.join(', ')}` }).default('development'),
  PORT: z.coerce.number().int().min(0).max(65535).default(3000),
  // Loopback unless told otherwise: a development machine does not offer its API (and demo data) to the network.
  HOST: z.string().default('127.0.0.1'),
  // How many reverse proxies of ours stand in front of the API; only their X-Forwarded-* headers are believed.
  TRUST_PROXY: z.coerce.number().int().min(0).max(10).default(0),
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

export type InvoiceReferenceMode = 'qr' | 'text' | 'purpose';

/**
 * Password checks (src/auth/password-checks.ts): failures counted in Postgres (src/auth/login-throttle.ts; correct
 * passwords are never counted), the KDF runs bounded per process, verified credentials remembered per process.
 */
export interface LoginLimits {
  /** Failures of one user name from one client address before that pair gets 429 for the rest of the window. */
  maxFailuresPerClientAndUsername: number;
  /** Failures of one user name (from all addresses) before each check of it by a new client waits a growing delay. */
  freeFailuresPerUsername: number;
  /** The longest such delay. */
  maxDelaySeconds: number;
  /** Failed checks from one client address, over all user names it has not signed in with, before it gets 429. */
  maxFailuresPerClient: number;
  windowSeconds: number;
  /** Password checks (scrypt runs) at once in one process. */
  maxConcurrentChecks: number;
  /** How long one process takes credentials it verified as verified again without scrypt; 0: never. */
  rememberSeconds: number;
}

export interface TemporalTlsSettings {
  /** The frontend's CA (PEM); unset: the system's roots. */
  caFile?: string;
  /** mTLS: the client certificate and its private key (PEM), both or neither. */
  certFile?: string;
  keyFile?: string;
  /** The name the frontend's certificate is checked against, and SNI; unset: the host of the address. */
  serverName?: string;
}

export interface Config {
  production: boolean;
  http: {
    port: number;
    host: string;
    /** Proxies of ours in front of the API: 0 ignores X-Forwarded-*; n takes the client address n hops back. */
    trustedProxies: number;
  };
  database: { url?: string; embeddedPort: number; dataDir: string };
  temporal: {
    address?: string;
    namespace: string;
    taskQueue: string;
    devServerPort: number;
    uiPort: number;
    uiUrl?: string;
    cliPath?: string;
    testServerPath?: string;
    /** Workflows a delivery worker keeps in memory; unset: DEFAULT_MAX_CACHED_WORKFLOWS (src/temporal/worker.ts). */
    maxCachedWorkflows?: number;
    /** Workflow task pollers of a delivery worker; unset: WORKFLOW_TASK_POLLERS (src/temporal/worker.ts). */
    workflowTaskPollers?: number;
    /** TLS to the frontend, with file names as given; undefined: plain text. src/temporal/connection.ts reads them. */
    tls?: TemporalTlsSettings;
    /** Sent as `authorization: Bearer <key>`; only with TLS. */
    apiKey?: string;
    /** Build id of a versioned delivery worker; unset: the build's own (src/temporal/worker-deployment.ts). */
    buildId?: string;
    /** Whether the production roles' workers are versioned (`npm start`'s never is). */
    workerVersioning: boolean;
  };
  auth: {
    /** HS256 keys: the first signs new tokens, every one verifies. */
    jwtSecrets: string[];
    jwtSecretGenerated: boolean;
    loginLimits: LoginLimits;
    /** How long a session (a sign-in and the refresh tokens rotated from it) lasts at most. */
    sessionMaxSeconds: number;
  };
  demo: { adminUsername: string; adminPassword?: string; seed: boolean };
  platform: {
    cartLogic: boolean;
    isStaging: boolean;
    /** What a QR invoice carries as reference: the 27-digit QR reference, a fixed text, or the donation purpose. */
    invoiceReference: { mode: InvoiceReferenceMode; text?: string };
  };
  webhooks: {
    allowInsecureUrls: boolean;
    /** An event waiting without an attempt, or failed with its next attempt overdue, for longer than this is stuck. */
    stuckAfterMinutes: number;
  };
  /**
   * Keys of the secrets at rest, the sealing one first. `generated`: SECRETS_KEYS was not set (never in production)
   * and the one key is random; the start command replaces it with the key kept in DATA_DIR (src/demo/local-secret.ts).
   */
  secrets: { keys: SecretKey[]; generated: boolean };
  cli: { staffPassword?: string };
  metrics: { port?: number; token?: string };
  /**
   * Days an event whose delivery has ended (delivered, max retries reached) is kept in Postgres with its attempts,
   * and days its payload and response bodies are kept (at most as long as the event).
   */
  retention: { eventDays: number; payloadDays: number };
  logLevel: string;
}

/**
 * JWT_SECRETS, or JWT_SECRET as a one-key list; undefined when neither is set. Both may be set (the Compose file
 * requires JWT_SECRET), but then JWT_SECRET must be one of JWT_SECRETS: a value that is silently ignored would let an
 * operator believe a key is in use that is not.
 */
function configuredJwtSecrets(single: string | undefined, list: string[] | undefined): string[] | undefined {
  if (!list || list.length === 0) return single === undefined ? undefined : [single];
  if (new Set(list).size !== list.length) throw new Error('Invalid configuration: JWT_SECRETS lists a secret twice');
  if (single !== undefined && !list.includes(single)) {
    throw new Error('Invalid configuration: JWT_SECRET must be one of JWT_SECRETS when both are set');
  }
  return list;
}

type Environment = z.infer<typeof environmentSchema>;

/**
 * The Temporal TLS settings, or undefined for plain text. Contradictions are refused here, by the names of the
 * settings: a certificate without its key (the frontend would refuse the connection later, with a TLS alert that names
 * neither), TLS switched off beside settings that need it, and TLS or an API key for the embedded dev server, which
 * speaks plain text only.
 */
function temporalTlsSettings(e: Environment): TemporalTlsSettings | undefined {
  const files = { caFile: e.TEMPORAL_TLS_CA_FILE, certFile: e.TEMPORAL_TLS_CERT_FILE, keyFile: e.TEMPORAL_TLS_KEY_FILE };
  const given = Object.entries({
    TEMPORAL_TLS_CA_FILE: files.caFile,
    TEMPORAL_TLS_CERT_FILE: files.certFile,
    TEMPORAL_TLS_KEY_FILE: files.keyFile,
    TEMPORAL_TLS_SERVER_NAME: e.TEMPORAL_TLS_SERVER_NAME,
    TEMPORAL_API_KEY: e.TEMPORAL_API_KEY,
  })
    .filter(([, value]) => value !== undefined)
    .map(([name]) => name);
  if ((files.certFile === undefined) !== (files.keyFile === undefined)) {
    const [set, missing] = files.certFile === undefined ? ['TEMPORAL_TLS_KEY_FILE', 'TEMPORAL_TLS_CERT_FILE'] : ['TEMPORAL_TLS_CERT_FILE', 'TEMPORAL_TLS_KEY_FILE'];
    throw new Error(`Invalid configuration: ${set} is set without ${missing}; a client certificate needs both`);
  }
  if (e.TEMPORAL_TLS === false && given.length > 0) {
    throw new Error(`Invalid configuration: TEMPORAL_TLS is false, but ${given.join(', ')} need TLS; remove TEMPORAL_TLS or them`);
  }
  const tls = e.TEMPORAL_TLS === true || given.length > 0;
  if (tls && !e.TEMPORAL_ADDRESS) {
    const named = given.length > 0 ? given.join(', ') : 'TEMPORAL_TLS';
    throw new Error(`Invalid configuration: ${named} set without TEMPORAL_ADDRESS; the embedded dev server takes plain text only`);
  }
  return tls ? { ...files, serverName: e.TEMPORAL_TLS_SERVER_NAME } : undefined;
}

/**
 * In production, a secret that meets the length but is a placeholder (`aaaa…`, `changemechangeme…`) does not start:
 * whoever guesses the JWT key mints staff tokens. Development keeps whatever it is given.
 */
function refuseGuessableSecrets(jwtSecrets: string[], metricsToken: string | undefined, keys: SecretKey[]): void {
  const weaknesses = [
    ...jwtSecrets.map((secret, index) => [`JWT secret ${index + 1}`, secretWeakness(secret)]),
    ['METRICS_TOKEN', metricsToken === undefined ? undefined : secretWeakness(metricsToken)],
    ...keys.map(({ key }, index) => [`SECRETS_KEYS key ${index + 1}`, keyWeakness(key)]),
  ].filter((entry): entry is [string, string] => entry[1] !== undefined);
  if (weaknesses.length > 0) {
    const named = weaknesses.map(([name, weakness]) => `${name} ${weakness}`).join('; ');
    throw new Error(`Invalid configuration: ${named}; generate each with openssl rand -hex 32`);
  }
}

/**
 * Reads the one typed configuration from the environment; nothing else reads process.env.
 * Production refuses to start without a JWT secret (a built-in default would let anyone mint tokens), without a
 * metrics token (the metrics name event types, outcomes and volumes to whoever reaches the port) and without the
 * keys of the secrets at rest (a generated key would differ between processes and be lost on restart).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // An empty value is no value: Compose passes `${NAME:-}` of an unset variable as "", which must mean the default.
  // Except NODE_ENV: an empty one may be a production whose setting got lost, and must not start as development.
  const given = Object.entries(env).filter(([name, value]) => value !== '' || name === 'NODE_ENV');
  const parsed = environmentSchema.safeParse(Object.fromEntries(given));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  }
  const e = parsed.data;
  const production = e.NODE_ENV === 'production';
  const jwtSecrets = configuredJwtSecrets(e.JWT_SECRET, e.JWT_SECRETS);
  if (production && !jwtSecrets) {
    throw new Error('Invalid configuration: JWT_SECRETS (or JWT_SECRET) is required when NODE_ENV=production');
  }
  if (production && !e.METRICS_TOKEN) {
    throw new Error('Invalid configuration: METRICS_TOKEN is required when NODE_ENV=production');
  }
  if (production && !e.SECRETS_KEYS) {
    throw new Error('Invalid configuration: SECRETS_KEYS is required when NODE_ENV=production');
  }
  let secretsKeys: SecretKey[] | undefined;
  try {
    secretsKeys = e.SECRETS_KEYS === undefined ? undefined : parseSecretsKeys(e.SECRETS_KEYS);
  } catch (err) {
    throw new Error(`Invalid configuration: SECRETS_KEYS: ${(err as Error).message}`);
  }
  if (production) refuseGuessableSecrets(jwtSecrets ?? [], e.METRICS_TOKEN, secretsKeys ?? []);
  const payloadRetentionDays = e.PAYLOAD_RETENTION_DAYS ?? e.EVENT_RETENTION_DAYS;
  if (payloadRetentionDays > e.EVENT_RETENTION_DAYS) {
    // A payload cannot outlive its event; a longer value would only promise what the purge does not keep.
    throw new Error('Invalid configuration: PAYLOAD_RETENTION_DAYS must not be longer than EVENT_RETENTION_DAYS');
  }
  if (e.PLATFORM_INVOICE_REFERENCE_MODE === 'text' && !e.PLATFORM_INVOICE_REFERENCE_TEXT) {
    throw new Error('Invalid configuration: PLATFORM_INVOICE_REFERENCE_TEXT is required when PLATFORM_INVOICE_REFERENCE_MODE=text');
  }
  return {
    production,
    http: { port: e.PORT, host: e.HOST, trustedProxies: e.TRUST_PROXY },
    database: { url: e.DATABASE_URL, embeddedPort: e.EMBEDDED_POSTGRES_PORT, dataDir: path.resolve(e.DATA_DIR) },
    temporal: {
      address: e.TEMPORAL_ADDRESS,
      namespace: e.TEMPORAL_NAMESPACE,
      taskQueue: e.TEMPORAL_TASK_QUEUE,
      devServerPort: e.TEMPORAL_DEV_SERVER_PORT,
      uiPort: e.TEMPORAL_UI_PORT,
      uiUrl: e.TEMPORAL_UI_URL,
      cliPath: e.TEMPORAL_CLI_PATH,
      testServerPath: e.TEMPORAL_TEST_SERVER_PATH,
      maxCachedWorkflows: e.TEMPORAL_MAX_CACHED_WORKFLOWS,
      workflowTaskPollers: e.TEMPORAL_WORKFLOW_TASK_POLLERS,
      tls: temporalTlsSettings(e),
      apiKey: e.TEMPORAL_API_KEY,
      buildId: e.BUILD_ID,
      workerVersioning: e.TEMPORAL_WORKER_VERSIONING,
    },
    auth: {
      jwtSecrets: jwtSecrets ?? [randomBytes(32).toString('hex')],
      jwtSecretGenerated: !jwtSecrets,
      loginLimits: {
        maxFailuresPerClientAndUsername: e.LOGIN_MAX_FAILURES_PER_CLIENT_AND_USERNAME,
        freeFailuresPerUsername: e.LOGIN_FREE_FAILURES_PER_USERNAME,
        maxDelaySeconds: e.LOGIN_MAX_DELAY_SECONDS,
        maxFailuresPerClient: e.LOGIN_MAX_FAILURES_PER_CLIENT,
        windowSeconds: e.LOGIN_FAILURE_WINDOW_SECONDS,
        maxConcurrentChecks: e.LOGIN_MAX_CONCURRENT_CHECKS,
        rememberSeconds: e.LOGIN_REMEMBER_SECONDS,
      },
      sessionMaxSeconds: e.SESSION_MAX_DAYS * 24 * 60 * 60,
    },
    demo: {
      adminUsername: e.ADMIN_USERNAME,
      adminPassword: e.ADMIN_PASSWORD,
      seed: e.SEED_DEMO_DATA ?? !production,
    },
    platform: {
      cartLogic: e.PLATFORM_CART_LOGIC,
      isStaging: e.PLATFORM_IS_STAGING,
      invoiceReference: { mode: e.PLATFORM_INVOICE_REFERENCE_MODE, text: e.PLATFORM_INVOICE_REFERENCE_TEXT },
    },
    webhooks: { allowInsecureUrls: e.ALLOW_INSECURE_WEBHOOK_URLS ?? !production, stuckAfterMinutes: e.DELIVERY_STUCK_AFTER_MINUTES },
    secrets: { keys: secretsKeys ?? [generateSecretKey()], generated: secretsKeys === undefined },
    cli: { staffPassword: e.STAFF_PASSWORD },
    metrics: { port: e.METRICS_PORT, token: e.METRICS_TOKEN },
    retention: { eventDays: e.EVENT_RETENTION_DAYS, payloadDays: payloadRetentionDays },
    logLevel: e.LOG_LEVEL,
  };
}
