import type { Server } from 'node:http';
import { createApp } from '../../src/http/app';
import { upsertUser } from '../../src/auth/users';
import { loadConfig } from '../../src/config';
import type { Db } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { createTestDatabase } from './database';

export const STAFF = { username: 'crm-sync', password: 'Zürisee-2025!' };
export const NON_STAFF = { username: 'redaktion', password: 'Matterhorn-4478' };

export interface TestApi {
  db: Db;
  baseUrl: string;
  /** The app's clock in seconds since the epoch; tests move it to pass token expiry. */
  clock: { now: number };
  close(): Promise<void>;
  /** An access token of the staff user, from POST /authentication/create. */
  staffToken(): Promise<string>;
  /** GET with the staff user's Bearer token unless other headers are given. */
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<Response>;
}

/** The real app on a loopback port, over its own migrated database, with a staff and a non-staff user. */
export async function startTestApi(env: NodeJS.ProcessEnv = {}): Promise<TestApi> {
  const { db } = await createTestDatabase();
  await upsertUser(db, { ...STAFF, isStaff: true });
  await upsertUser(db, { ...NON_STAFF, isStaff: false });
  const clock = { now: Math.floor(Date.now() / 1000) };
  const config = loadConfig({ JWT_SECRET: 'test-secret-that-is-long-enough-for-hs256-0123', ...env });
  const app = createApp({ db, config, log: createLogger('silent'), clock: () => clock.now });
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${baseUrl}${path}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  let token: string | undefined;
  const staffToken = async () => {
    if (!token) {
      const response = await post('/authentication/create', STAFF);
      token = ((await response.json()) as { access: string }).access;
    }
    return token;
  };
  return {
    db,
    baseUrl,
    clock,
    staffToken,
    post,
    async get(path, headers) {
      return fetch(`${baseUrl}${path}`, { headers: headers ?? { Authorization: `Bearer ${await staffToken()}` } });
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await db.destroy();
    },
  };
}

export const basicAuth = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`;
