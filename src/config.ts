import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { generateSecretKey, parseSecretsKeys, type SecretKey } from './secrets/keyring';
import { type Environment, environmentSchema, type OTLP_PROTOCOLS, type TRACE_SAMPLERS } from './config-variables';
import { keyWeakness, secretWeakness } from './secrets/secret-strength';
import { parseTrustedProxies } from './shared/trusted-proxy-list';

export { projectRoot } from './config-variables';

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

/** Tracing as the OTEL_* settings switch it on (src/observability/tracing/); no such object: tracing is off. */
export interface TracingSettings {
  exporter: 'otlp' | 'console';
  /** The OTLP receiver's traces URL: OTEL_EXPORTER_OTLP_ENDPOINT with `/v1/traces`. */
  tracesUrl: string;
  protocol: (typeof OTLP_PROTOCOLS)[number];
  /** OTEL_SERVICE_NAME; unset: the start command names the role. */
  serviceName?: string;
  /** OTEL_RESOURCE_ATTRIBUTES, decoded. */
  resourceAttributes: Record<string, string>;
  sampler: (typeof TRACE_SAMPLERS)[number];
  /** The ratio of the traceidratio samplers. */
  samplerRatio: number;
}

export interface Config {
  production: boolean;
  http: {
    port: number;
    host: string;
    /** Addresses and CIDR ranges of the proxies in front of the API, whose X-Forwarded-* are believed; empty: none. */
    trustedProxies: string[];
    /** The origin every absolute link is built from; undefined: http://localhost and the port a request came in on. */
    publicOrigin?: string;
    /** How long a client may take to send its headers, then its body (src/http/http-server.ts). */
    timeouts: { headersSeconds: number; bodySeconds: number };
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
    /** Every attempt failed for this long: the endpoint is failing (src/delivery-rules/endpoint-failing.ts). */
    endpointFailingAfterMinutes: number;
    /** Send the attempt's `traceparent` to the subscriber (only while tracing is on). */
    sendTraceparent: boolean;
  };
  /** Undefined: tracing is off. */
  tracing?: TracingSettings;
  /**
   * Keys of the secrets at rest, the sealing one first. `generated`: SECRETS_KEYS was not set (never in production)
   * and the one key is random; the start command replaces it with the key kept in DATA_DIR (src/secrets/local-secret.ts).
   */
  secrets: { keys: SecretKey[]; generated: boolean };
  cli: { staffPassword?: string };
  metrics: { port?: number; token?: string };
  /**
   * Days an ended event (delivered, max retries reached) is kept in Postgres with its attempts, and days its payload
   * and response bodies are kept (at most as long as the event), both counted from its creation (docs/retention.md).
   */
  retention: { eventDays: number; payloadDays: number };
  logLevel: string;
}

/**
 * JWT_SECRETS, or the legacy JWT_SECRET as a one-key list; undefined when neither is set. Both may be set (an older
 * .env keeps JWT_SECRET beside the JWT_SECRETS the Compose file requires), but then JWT_SECRET must be one of
 * JWT_SECRETS: a value that is silently ignored would let an operator believe a key is in use that is not.
 */
function configuredJwtSecrets(single: string | undefined, list: string[] | undefined): string[] | undefined {
  if (!list || list.length === 0) return single === undefined ? undefined : [single];
  if (new Set(list).size !== list.length) throw new Error('Invalid configuration: JWT_SECRETS lists a secret twice');
  if (single !== undefined && !list.includes(single)) {
    throw new Error('Invalid configuration: JWT_SECRET must be one of JWT_SECRETS when both are set');
  }
  return list;
}

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

/** The variables, parsed; every problem named in one error. */
function parseEnvironment(env: NodeJS.ProcessEnv): Environment {
  // An empty value is no value: Compose passes `${NAME:-}` of an unset variable as "", which must mean the default.
  // Except NODE_ENV: an empty one may be a production whose setting got lost, and must not start as development.
  const given = Object.entries(env).filter(([name, value]) => value !== '' || name === 'NODE_ENV');
  const parsed = environmentSchema.safeParse(Object.fromEntries(given));
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/** The secrets production does not start without. */
function refuseMissingProductionSecrets(e: Environment, jwtSecrets: string[] | undefined): void {
  if (!jwtSecrets) throw new Error('Invalid configuration: JWT_SECRETS (or JWT_SECRET) is required when NODE_ENV=production');
  if (!e.METRICS_TOKEN) throw new Error('Invalid configuration: METRICS_TOKEN is required when NODE_ENV=production');
  if (!e.SECRETS_KEYS) throw new Error('Invalid configuration: SECRETS_KEYS is required when NODE_ENV=production');
  // Not a secret, but without it links would name whatever host a client sent.
  if (!e.PUBLIC_URL) throw new Error('Invalid configuration: PUBLIC_URL (the origin clients reach the API at, e.g. https://donations.example.org) is required when NODE_ENV=production');
}

function trustedProxiesOf(value: string): string[] {
  try {
    return parseTrustedProxies(value);
  } catch (err) {
    throw new Error(`Invalid configuration: ${(err as Error).message}`);
  }
}

/**
 * PUBLIC_URL as an origin: http or https, a host, an optional port, nothing else. A path would have to be stripped by
 * a proxy this service knows nothing of, and user info or a query has no place in a link's origin.
 */
function publicOriginOf(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`Invalid configuration: PUBLIC_URL ${JSON.stringify(value)} is not a URL; give the origin, e.g. https://donations.example.org`);
  }
  const bare = url.username === '' && url.password === '' && url.pathname === '/' && url.search === '' && url.hash === '';
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !bare) {
    throw new Error(`Invalid configuration: PUBLIC_URL must be http(s)://host[:port] and nothing more, not ${JSON.stringify(value)}`);
  }
  return url.origin;
}

/** SECRETS_KEYS as keys; undefined when it is not set. */
function configuredSecretsKeys(value: string | undefined): SecretKey[] | undefined {
  try {
    return value === undefined ? undefined : parseSecretsKeys(value);
  } catch (err) {
    throw new Error(`Invalid configuration: SECRETS_KEYS: ${(err as Error).message}`);
  }
}

/** The Temporal part: where, which namespace and task queue, the worker's settings, TLS and the API key. */
function temporalConfig(e: Environment): Config['temporal'] {
  return {
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
  };
}

/** OTEL_RESOURCE_ATTRIBUTES (`key=value,…`, values percent-encoded, as the specification says) as attributes. */
function resourceAttributesOf(value: string | undefined): Record<string, string> {
  if (value === undefined) return {};
  try {
    return Object.fromEntries(
      value.split(',').map((pair) => {
        const at = pair.indexOf('=');
        return [pair.slice(0, at).trim(), decodeURIComponent(pair.slice(at + 1).trim())];
      }),
    );
  } catch {
    throw new Error('Invalid configuration: OTEL_RESOURCE_ATTRIBUTES has a value that is not valid percent-encoding');
  }
}

/** The tracing settings, or undefined when OTEL_TRACES_EXPORTER is unset or `none`. */
function tracingSettingsOf(e: Environment): TracingSettings | undefined {
  if (e.OTEL_TRACES_EXPORTER === undefined || e.OTEL_TRACES_EXPORTER === 'none') return undefined;
  return {
    exporter: e.OTEL_TRACES_EXPORTER,
    tracesUrl: `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '')}/v1/traces`,
    protocol: e.OTEL_EXPORTER_OTLP_PROTOCOL,
    serviceName: e.OTEL_SERVICE_NAME,
    resourceAttributes: resourceAttributesOf(e.OTEL_RESOURCE_ATTRIBUTES),
    sampler: e.OTEL_TRACES_SAMPLER,
    samplerRatio: e.OTEL_TRACES_SAMPLER_ARG ?? 1,
  };
}

function loginLimitsOf(e: Environment): LoginLimits {
  return {
    maxFailuresPerClientAndUsername: e.LOGIN_MAX_FAILURES_PER_CLIENT_AND_USERNAME,
    freeFailuresPerUsername: e.LOGIN_FREE_FAILURES_PER_USERNAME,
    maxDelaySeconds: e.LOGIN_MAX_DELAY_SECONDS,
    maxFailuresPerClient: e.LOGIN_MAX_FAILURES_PER_CLIENT,
    windowSeconds: e.LOGIN_FAILURE_WINDOW_SECONDS,
    maxConcurrentChecks: e.LOGIN_MAX_CONCURRENT_CHECKS,
    rememberSeconds: e.LOGIN_REMEMBER_SECONDS,
  };
}

/**
 * This process's environment without the OTEL_* settings, for the Temporal dev server it starts: they are the
 * service's (docs/observability.md#traces), but the Temporal server reads the same names for its own traces, refuses to
 * start on `console`, and would bury the service's spans under its internal ones.
 */
export const environmentWithoutTracing = (env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(env).filter(([name]) => !name.startsWith('OTEL_')));

/**
 * Reads the one typed configuration from the environment; nothing else reads process.env.
 * Production refuses to start without a JWT secret (a built-in default would let anyone mint tokens), without a
 * metrics token (the metrics name event types, outcomes and volumes to whoever reaches the port) and without the
 * keys of the secrets at rest (a generated key would differ between processes and be lost on restart).
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const e = parseEnvironment(env);
  const production = e.NODE_ENV === 'production';
  const jwtSecrets = configuredJwtSecrets(e.JWT_SECRET, e.JWT_SECRETS);
  if (production) refuseMissingProductionSecrets(e, jwtSecrets);
  const secretsKeys = configuredSecretsKeys(e.SECRETS_KEYS);
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
    http: {
      port: e.PORT,
      host: e.HOST,
      trustedProxies: trustedProxiesOf(e.TRUST_PROXY),
      publicOrigin: publicOriginOf(e.PUBLIC_URL),
      timeouts: { headersSeconds: e.REQUEST_HEADERS_TIMEOUT_SECONDS, bodySeconds: e.REQUEST_BODY_TIMEOUT_SECONDS },
    },
    database: { url: e.DATABASE_URL, embeddedPort: e.EMBEDDED_POSTGRES_PORT, dataDir: path.resolve(e.DATA_DIR) },
    temporal: temporalConfig(e),
    auth: {
      jwtSecrets: jwtSecrets ?? [randomBytes(32).toString('hex')],
      jwtSecretGenerated: !jwtSecrets,
      loginLimits: loginLimitsOf(e),
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
    webhooks: {
      allowInsecureUrls: e.ALLOW_INSECURE_WEBHOOK_URLS ?? !production,
      stuckAfterMinutes: e.DELIVERY_STUCK_AFTER_MINUTES,
      endpointFailingAfterMinutes: e.ENDPOINT_FAILING_AFTER_MINUTES,
      sendTraceparent: e.WEBHOOK_SEND_TRACEPARENT,
    },
    tracing: tracingSettingsOf(e),
    secrets: { keys: secretsKeys ?? [generateSecretKey()], generated: secretsKeys === undefined },
    cli: { staffPassword: e.STAFF_PASSWORD },
    metrics: { port: e.METRICS_PORT, token: e.METRICS_TOKEN },
    retention: { eventDays: e.EVENT_RETENTION_DAYS, payloadDays: payloadRetentionDays },
    logLevel: e.LOG_LEVEL,
  };
}
