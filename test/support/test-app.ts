import type { Server } from 'node:http';
import { createApp } from '../../src/http/app';
import type { AppDependencies } from '../../src/http/context';
import { issueTokenPair } from '../../src/auth/tokens';
import { upsertUser } from '../../src/auth/users';
import { type Config, loadConfig } from '../../src/config';
import type { Db } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { createTestDatabase } from './database';
import { dnsTable, PUBLIC_ADDRESS } from './dns-table';

export interface TestApp {
  db: Db;
  /** The connection string of `db`, for code under test that opens its own connection (command-line tools). */
  databaseUrl: string;
  config: Config;
  baseUrl: string;
  /** Bearer header of a staff user, issued at the app clock's current time. */
  staff(): Record<string, string>;
  /** Bearer header of an active user without staff permission. */
  nonStaff(): Record<string, string>;
  /** The app's clock (seconds since the epoch); tests set it to control every recorded time. */
  clock: { now: number };
  /** A JSON request, as the staff user unless other headers are given; `body` as a string is sent verbatim. */
  request(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

/** Subscriber host names resolve from a table (no DNS here): crm.example.org to a public address by default. */
const defaultResolver = dnsTable({ 'crm.example.org': [PUBLIC_ADDRESS] });

/**
 * The real app over real HTTP on loopback, with its own database and a staff user. `temporalClient`: where a resend
 * starts its workflow (without it a resend answers 503). `resolveHost`: the DNS of the subscriber URL check.
 */
export async function startTestApp(
  env: NodeJS.ProcessEnv = {},
  { temporalClient, resolveHost = defaultResolver }: Pick<AppDependencies, 'temporalClient' | 'resolveHost'> = {},
): Promise<TestApp> {
  const { db, url: databaseUrl } = await createTestDatabase();
  const config = loadConfig({ JWT_SECRET: 'test-secret-of-at-least-thirty-two-chars', ...env });
  const clock = { now: Math.floor(Date.parse('2025-07-15T10:30:00Z') / 1000) };
  const app = createApp({ db, config, log: createLogger('silent'), clock: () => clock.now, temporalClient, resolveHost });
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

  const tokens = { secrets: config.auth.jwtSecrets, clock: () => clock.now };
  const staffUser = await upsertUser(db, { username: 'staff', password: 'staff-password', isStaff: true });
  const plainUser = await upsertUser(db, { username: 'plain', password: 'plain-password', isStaff: false });
  const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

  return {
    db,
    databaseUrl,
    config,
    baseUrl,
    clock,
    staff: () => bearer(issueTokenPair(tokens, staffUser).access),
    nonStaff: () => bearer(issueTokenPair(tokens, plainUser).access),
    async request(method, path, body, headers = bearer(issueTokenPair(tokens, staffUser).access)) {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    async close() {
      await new Promise((resolve) => server.close(resolve));
      await db.destroy();
    },
  };
}
