import net from 'node:net';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createApp } from '../../src/http/app';
import { loadConfig } from '../../src/config';
import { createDb, type Db } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { checkDependencies } from '../../src/observability/readiness';
import { createTemporalClient } from '../../src/temporal/client';
import { createTestDatabase } from '../support/database';
import { freePort } from '../support/free-port';
import { captureLogs } from '../support/log-capture';
import { createTimeSkippingEnvironment } from '../support/temporal';

const log = createLogger('silent');

let env: TestWorkflowEnvironment;
let db: Db;
let closedPort: number;
const servers: Server[] = [];
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  ({ db } = await createTestDatabase());
  closedPort = await freePort();
});

afterAll(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  for (const cleanup of cleanups) await cleanup();
  await db?.destroy();
  await env?.teardown();
});

async function serve(database: Db, temporalClient?: Client): Promise<string> {
  const app = createApp({ db: database, config: loadConfig({}), log, temporalClient });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function unreachableDatabase(port = closedPort): Db {
  const unreachable = createDb({ connectionString: `postgres://nobody@127.0.0.1:${port}/nothing` });
  cleanups.push(() => unreachable.destroy());
  return unreachable;
}

function unreachableTemporal(): Client {
  const client = createTemporalClient({ address: `127.0.0.1:${closedPort}`, namespace: 'default' });
  cleanups.push(() => client.connection.close());
  return client;
}

async function readyz(baseUrl: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(`${baseUrl}/readyz`);
  return { status: response.status, body: await response.json() };
}

test('200 when Postgres and Temporal both answer', async () => {
  expect(await readyz(await serve(db, env.client))).toEqual({ status: 200, body: { postgres: 'ok', temporal: 'ok' } });
});

test('503 naming Temporal when it is not reachable', async () => {
  const started = Date.now();
  expect(await readyz(await serve(db, unreachableTemporal()))).toEqual({
    status: 503,
    body: { error: 'Not ready: temporal unavailable', code: 'not_ready', postgres: 'ok', temporal: 'unavailable' },
  });
  expect(Date.now() - started).toBeLessThan(5_000);
});

test('503 naming Postgres when it is not reachable, while /healthz fails too', async () => {
  const baseUrl = await serve(unreachableDatabase(), env.client);
  expect(await readyz(baseUrl)).toEqual({
    status: 503,
    body: { error: 'Not ready: postgres unavailable', code: 'not_ready', postgres: 'unavailable', temporal: 'ok' },
  });
  expect((await fetch(`${baseUrl}/healthz`)).status).toBe(503);
});

test('503 naming both when neither is reachable', async () => {
  expect(await readyz(await serve(unreachableDatabase(), unreachableTemporal()))).toMatchObject({
    status: 503,
    body: { error: 'Not ready: postgres, temporal unavailable', postgres: 'unavailable', temporal: 'unavailable' },
  });
});

test('a process without a Temporal client is ready on Postgres alone', async () => {
  expect(await readyz(await serve(db))).toEqual({ status: 200, body: { postgres: 'ok' } });
});

test('a dependency that accepts connections but never answers is unavailable once the time limit has passed', async () => {
  // Accepts TCP connections and stays silent, as a hung database or a black-holed route would.
  const sockets = new Set<net.Socket>();
  const silent = net.createServer((socket) => sockets.add(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
  cleanups.push(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });
  const logs = captureLogs();

  const started = Date.now();
  const states = await checkDependencies(
    // Postgres alone: a loaded machine must not turn Temporal's answer into a second timeout here.
    { db: unreachableDatabase((silent.address() as AddressInfo).port), timeoutMs: 300 },
    logs.log,
  );
  expect(states).toEqual({ postgres: 'unavailable' });
  expect(Date.now() - started).toBeLessThan(2_000);
  expect(logs.entries()).toEqual([
    expect.objectContaining({ level: 40, dependency: 'postgres', msg: 'readiness check failed', err: expect.objectContaining({ message: 'postgres did not answer within 300 ms' }) }),
  ]);
});
