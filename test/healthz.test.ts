import type { Server } from 'node:http';
import { createApp } from '../src/http/app';
import { loadConfig } from '../src/config';
import type { Db } from '../src/db/knex';
import { createLogger } from '../src/logger';
import { createTestDatabase } from './support/database';

let db: Db;
let server: Server;
let baseUrl: string;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  const app = createApp({ db, config: loadConfig({}), log: createLogger('silent') });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const address = server.address() as { port: number };
  baseUrl = `http://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await db?.destroy();
});

test('/healthz answers ok over real HTTP once Postgres answers', async () => {
  const response = await fetch(`${baseUrl}/healthz`);
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ status: 'ok' });
});

test('an unknown path is a JSON 404', async () => {
  const response = await fetch(`${baseUrl}/nowhere`);
  expect(response.status).toBe(404);
  expect(await response.json()).toEqual({ error: 'Not found', code: 'not_found' });
});
