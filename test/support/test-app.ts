import type { Server } from 'node:http';
import type Koa from 'koa';
import { createApp } from '../../src/runtime/app';
import { createHttpServer } from '../../src/http/http-server';
import type { AppDependencies } from '../../src/route-context';
import { issueTokenPair } from '../../src/auth/tokens';
import { upsertUser } from '../../src/auth/accounts';
import { type Config, loadConfig } from '../../src/config';
import type { Db } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { createKeyring, type Keyring } from '../../src/secrets/keyring';
import { createTestDatabase } from './database';
import { dnsTable, PUBLIC_ADDRESS } from './dns-table';

/** The accounts every test app has: a staff user and an active user without staff permission. */
export const STAFF = { username: 'staff', password: 'staff-password' };
export const NON_STAFF = { username: 'plain', password: 'plain-password' };
/** The token key of every test app whose env names none (tests forging tokens sign with it). */
export const TEST_JWT_SECRET = 'test-secret-of-at-least-thirty-two-chars';
/** The app clock's start: every test app begins at this instant, and tests move `clock.now` from there. */
export const TEST_APP_TIME = '2025-07-15T10:30:00Z';

type Headers = Record<string, string>;

export const bearer = (token: string): Headers => ({ Authorization: `Bearer ${token}` });
export const basicAuth = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;

/** Requests to the app, all with the same default credentials; `headers`, when given, replace them. */
export interface Requests {
  /** One request; `body` is sent as JSON, a string verbatim. */
  send(method: string, path: string, body?: unknown, headers?: Headers): Promise<Response>;
  /** `send`, with the JSON answer parsed. */
  request(method: string, path: string, body?: unknown, headers?: Headers): Promise<{ status: number; body: any }>;
  get(path: string, headers?: Headers): Promise<Response>;
  post(path: string, body: unknown, headers?: Headers): Promise<Response>;
}

export interface TestApp extends Requests {
  db: Db;
  /** The connection string of `db`, for code under test that opens its own connection (command-line tools). */
  databaseUrl: string;
  config: Config;
  /** The keys the app seals the endpoint's secrets with: what a delivery worker of this app needs. */
  keyring: Keyring;
  baseUrl: string;
  /** The origin of the links the app answers with: PUBLIC_URL, else what the start command prints (localhost). */
  linkOrigin: string;
  /** The app itself, for tests that read its middleware (the router). */
  koa: Koa;
  /** The app's clock (seconds since the epoch), at TEST_APP_TIME; tests move it to control every recorded time. */
  clock: { now: number };
  /** Bearer header of the staff user, issued at the app clock's current time; what requests send by default. */
  staff(): Headers;
  /** A token pair of the staff user, as a sign-in would give it. */
  staffTokens(): { access: string; refresh: string };
  /** Bearer header of the non-staff user. */
  nonStaff(): Headers;
  /** The same requests without credentials. */
  anonymous: Requests;
  close(): Promise<void>;
}

export interface TestAppDependencies extends Partial<Pick<AppDependencies, 'temporalClient' | 'resolveHost' | 'log' | 'metrics'>> {
  /**
   * How the app reaches its database instead of directly as `db` does: through a proxy that can be cut, to an
   * address where nothing answers, or to another app's database (two processes side by side: sign in there, as
   * `staff()` speaks for the users of this app's own database). Closed with the app.
   */
  connect?: (databaseUrl: string) => Db | Promise<Db>;
}

/** Subscriber host names resolve from a table (no DNS here): crm.example.org to a public address by default. */
const defaultResolver = dnsTable({ 'crm.example.org': [PUBLIC_ADDRESS] });

function requestsTo(baseUrl: string, defaultHeaders: () => Headers): Requests {
  const send = (method: string, path: string, body?: unknown, headers: Headers = defaultHeaders()) =>
    fetch(`${baseUrl}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
  return {
    send,
    async request(method, path, body, headers) {
      const response = await send(method, path, body, headers);
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    get: (path, headers) => send('GET', path, undefined, headers),
    post: (path, body, headers) => send('POST', path, body, headers),
  };
}

/**
 * The real app over real HTTP on loopback, with a database of its own holding the STAFF and NON_STAFF users, and
 * the app clock at TEST_APP_TIME. `env` configures it as the environment would (TRUST_PROXY, METRICS_TOKEN,
 * production, ...); `dependencies` hands it a Temporal client (without one a resend answers 503), the DNS of the
 * subscriber URL check, a logger or metrics to read, or another way to its database.
 */
export async function startTestApp(
  env: NodeJS.ProcessEnv = {},
  { resolveHost = defaultResolver, log = createLogger('silent'), connect, ...dependencies }: TestAppDependencies = {},
): Promise<TestApp> {
  const { db, url: databaseUrl } = await createTestDatabase();
  const appDb = await connect?.(databaseUrl);
  const config = loadConfig({ ...(env.JWT_SECRETS === undefined && { JWT_SECRET: TEST_JWT_SECRET }), ...env });
  const clock = { now: Math.floor(Date.parse(TEST_APP_TIME) / 1000) };
  const koa = createApp({ db: appDb ?? db, config, log, clock: () => clock.now, resolveHost, ...dependencies });
  const server: Server = createHttpServer(koa, config.http.timeouts).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as { port: number };
  const baseUrl = `http://127.0.0.1:${port}`;

  const tokens = { secrets: config.auth.jwtSecrets, clock: () => clock.now, sessionMaxSeconds: config.auth.sessionMaxSeconds };
  const staffUser = await upsertUser(db, { ...STAFF, isStaff: true });
  const plainUser = await upsertUser(db, { ...NON_STAFF, isStaff: false });
  const staffTokens = () => issueTokenPair(tokens, staffUser);
  const staff = () => bearer(staffTokens().access);

  return {
    ...requestsTo(baseUrl, staff),
    anonymous: requestsTo(baseUrl, () => ({})),
    db,
    databaseUrl,
    config,
    keyring: createKeyring(config.secrets.keys),
    baseUrl,
    linkOrigin: config.http.publicOrigin ?? `http://localhost:${port}`,
    koa,
    clock,
    staff,
    staffTokens,
    nonStaff: () => bearer(issueTokenPair(tokens, plainUser).access),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await appDb?.destroy();
      await db.destroy();
    },
  };
}
