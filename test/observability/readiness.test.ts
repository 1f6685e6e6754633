import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Client } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { createDb, type Db } from '../../src/db/knex';
import { checkDependencies } from '../../src/probes/readiness';
import { createTemporalClient } from '../../src/temporal/client';
import { freePort } from '../support/free-port';
import { captureLogs } from '../support/log-capture';
import { createTimeSkippingEnvironment } from '../support/temporal';
import { startTestApp, type TestApp } from '../support/test-app';

let env: TestWorkflowEnvironment;
let closedPort: number;
const apps: TestApp[] = [];
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  env = await createTimeSkippingEnvironment();
  closedPort = await freePort();
});

afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  for (const cleanup of cleanups) await cleanup();
  await env?.teardown();
});

/** The app's base URL, over its own database or over one it cannot reach. */
async function serve(database: 'reachable' | 'unreachable', temporalClient?: Client): Promise<string> {
  const app = await startTestApp({}, { temporalClient, ...(database === 'unreachable' && { connect: () => unreachableDatabase() }) });
  apps.push(app);
  return app.baseUrl;
}

const unreachableDatabase = (port = closedPort): Db => createDb({ connectionString: `postgres://nobody@127.0.0.1:${port}/nothing` });

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
  expect(await readyz(await serve('reachable', env.client))).toEqual({ status: 200, body: { postgres: 'ok', temporal: 'ok' } });
});

test('503 naming Temporal when it is not reachable', async () => {
  const started = Date.now();
  expect(await readyz(await serve('reachable', unreachableTemporal()))).toEqual({
    status: 503,
    body: { error: 'Not ready: temporal unavailable', code: 'not_ready', postgres: 'ok', temporal: 'unavailable' },
  });
  expect(Date.now() - started).toBeLessThan(5_000);
});

test('503 naming Postgres when it is not reachable, while /healthz fails too', async () => {
  const baseUrl = await serve('unreachable', env.client);
  expect(await readyz(baseUrl)).toEqual({
    status: 503,
    body: { error: 'Not ready: postgres unavailable', code: 'not_ready', postgres: 'unavailable', temporal: 'ok' },
  });
  expect((await fetch(`${baseUrl}/healthz`)).status).toBe(503);
});

test('503 naming both when neither is reachable', async () => {
  expect(await readyz(await serve('unreachable', unreachableTemporal()))).toMatchObject({
    status: 503,
    body: { error: 'Not ready: postgres, temporal unavailable', postgres: 'unavailable', temporal: 'unavailable' },
  });
});

test('a process without a Temporal client is ready on Postgres alone', async () => {
  expect(await readyz(await serve('reachable'))).toEqual({ status: 200, body: { postgres: 'ok' } });
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

  const hung = unreachableDatabase((silent.address() as AddressInfo).port);
  cleanups.push(() => hung.destroy());

  const started = Date.now();
  const states = await checkDependencies(
    // Postgres alone: a loaded machine must not turn Temporal's answer into a second timeout here.
    { db: hung, timeoutMs: 300 },
    logs.log,
  );
  expect(states).toEqual({ postgres: 'unavailable' });
  expect(Date.now() - started).toBeLessThan(2_000);
  expect(logs.entries()).toEqual([
    expect.objectContaining({ level: 40, dependency: 'postgres', msg: 'readiness check failed', err: expect.objectContaining({ message: 'postgres did not answer within 300 ms' }) }),
  ]);
});
