import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config';
import type { Db } from '../../src/db/knex';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { createMetrics } from '../../src/observability/metrics';
import { startRelay, startTemporalClient, startWorker } from '../../src/runtime/components';
import { Lifecycle } from '../../src/runtime/lifecycle';
import { createTemporalClient } from '../../src/temporal/client';
import { connectNativeTemporal, openTemporalSettings } from '../../src/temporal/connection';
import { temporalConnection } from '../../src/temporal/connection-settings';
import type { DevServerHandle } from '../../src/temporal/dev-server';
import { RETENTION_SCHEDULE_ID } from '../../src/delivery-rules/retention';
import { createTestAuthority, type PemPair, type TestAuthority } from '../support/certificates';
import { createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';
import { captureLogs } from '../support/log-capture';
import { startTestDevServer } from '../support/temporal';
import { startRecordingEndpoint, startTlsFront, type TlsFront } from '../support/tls-front';
import { eventRow, insertEndpoint, insertEvent, workflowIdOf } from '../support/webhook-rows';

// The service's Temporal connections through TLS, as a cluster with mTLS on its frontend or Temporal Cloud has them:
// a TLS listener that requires a client certificate pipes to the dev server's plain port. Configuration from the
// environment, as the roles read it; the worker, the relay, the API's client and the retention schedule go through it.

const SERVER_NAME = 'temporal.test';
const API_KEY = 'tc-api-key-of-this-test-0123456789';

let dir: string;
let ca: TestAuthority;
let clientPair: PemPair;
let temporal: DevServerHandle;
let front: TlsFront;
let db: Db;
let subscriber: Subscriber;

const file = (name: string) => path.join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'temporal-tls-'));
  ca = await createTestAuthority('Temporal Test CA');
  const stranger = await createTestAuthority('Nobody Trusts This CA');
  const server = await ca.issue({ commonName: SERVER_NAME, usage: 'server', dnsNames: [SERVER_NAME] });
  clientPair = await ca.issue({ commonName: 'delivery-worker', usage: 'client' });
  const strangerPair = await stranger.issue({ commonName: 'intruder', usage: 'client' });
  const files = { 'ca.pem': ca.cert, 'stranger-ca.pem': stranger.cert, 'bundle.pem': `${stranger.cert}\n${ca.cert}\n`, 'glued-bundle.pem': `${stranger.cert.trimEnd()}${ca.cert}`, 'client.pem': clientPair.cert, 'client.key': clientPair.key, 'server.pem': server.cert, 'server.key': server.key, 'intruder.pem': strangerPair.cert, 'intruder.key': strangerPair.key };
  for (const [name, content] of Object.entries(files)) await writeFile(file(name), content, { mode: 0o600 });
  temporal = await startTestDevServer();
  const [host, port] = temporal.address.split(':');
  front = await startTlsFront({ target: { host, port: Number(port) }, server, clientCa: ca.cert });
  ({ db } = await createTestDatabase());
  subscriber = await startSubscriber({ reply: () => ({ status: 200, body: 'received' }) });
}, 60_000);

afterAll(async () => {
  await subscriber?.close();
  await db?.destroy();
  await front?.close();
  await temporal?.stop();
  await rm(dir, { recursive: true, force: true });
});

const mtlsEnv = () => ({
  TEMPORAL_ADDRESS: front.address,
  TEMPORAL_TLS_CA_FILE: file('ca.pem'),
  TEMPORAL_TLS_CERT_FILE: file('client.pem'),
  TEMPORAL_TLS_KEY_FILE: file('client.key'),
  TEMPORAL_TLS_SERVER_NAME: SERVER_NAME,
});

/** The mTLS environment with some settings changed: file settings name files of this test's folder, '' unsets. */
const changedEnv = (changes: Record<string, string>) => ({
  ...mtlsEnv(),
  ...Object.fromEntries(Object.entries(changes).map(([name, value]) => [name, value !== '' && name.endsWith('_FILE') ? file(value) : value])),
});

/** The connection options a role would make from this environment. */
const connectionFor = (env: Record<string, string>) => {
  const config = loadConfig({ ...env, TEMPORAL_NAMESPACE: 'default' });
  return temporalConnection(config.temporal.address!, config.temporal).options;
};

test('worker, relay, API client and retention schedule work through a frontend that requires a client certificate', async () => {
  const logs = captureLogs();
  const config = loadConfig({ ...mtlsEnv(), TEMPORAL_TASK_QUEUE: `tls-${randomUUID()}`, ALLOW_INSECURE_WEBHOOK_URLS: 'true' });
  const lifecycle = new Lifecycle(logs.log);
  const runtime = { config, log: logs.log, lifecycle, metrics: createMetrics() };
  try {
    // As connectTemporal (src/runtime/infrastructure.ts) makes them for every role.
    const connection = openTemporalSettings(config.temporal.address!, config.temporal, logs.log);
    const { client: workerClient, startsEagerly } = await startWorker(runtime, db, connection, { versioned: false });
    startRelay(runtime, db, workerClient, { eagerStart: startsEagerly });
    const apiClient = startTemporalClient(runtime, connection);

    const event = await insertEvent(db, await insertEndpoint(db, { url: subscriber.url }));
    await eventually(async () => (await eventRow(db, event.id)).status === 'delivered', { timeoutMs: 30_000, what: 'the event delivered through TLS' });
    // The API's own client (resends, readiness) reaches the same workflow, and the schedule was made through TLS too.
    // The status is recorded by the attempt, inside the workflow task that completes the workflow: on a busy machine
    // the workflow may still be running a moment after the row says delivered.
    const handle = apiClient.workflow.getHandle(await workflowIdOf(db, event.id));
    await eventually(async () => (await handle.describe()).status.name === 'COMPLETED', { timeoutMs: 10_000, what: 'the delivery workflow completed' });
    expect((await apiClient.schedule.getHandle(RETENTION_SCHEDULE_ID).describe()).scheduleId).toBe(RETENTION_SCHEDULE_ID);
  } finally {
    await lifecycle.stop();
  }
  expect(subscriber.requests.length).toBeGreaterThanOrEqual(1);
  // Every connection that got through showed the client certificate.
  expect(new Set(front.clients())).toEqual(new Set(['delivery-worker']));
  const startLine = logs.entries().find((entry) => entry.msg.startsWith('Temporal: '));
  expect(startLine?.msg).toBe(`Temporal: ${front.address}, namespace default, TLS on (mTLS), server name ${SERVER_NAME}`);
  expect(logs.text()).not.toContain('PRIVATE KEY');
  expect(logs.text()).not.toContain(clientPair.key.split('\n')[1]);
}, 90_000);

test.each([
  ['a CA that did not sign the server certificate', { TEMPORAL_TLS_CA_FILE: 'stranger-ca.pem' }, /not signed by a CA this service trusts: TEMPORAL_TLS_CA_FILE/],
  // TLS 1.3: the refusal arrives as the server's alert or as a closed connection, whichever the client reads first.
  ['no client certificate', { TEMPORAL_TLS_CERT_FILE: '', TEMPORAL_TLS_KEY_FILE: '' }, /(requires a client certificate|a client certificate it does not accept): TEMPORAL_TLS_CERT_FILE and TEMPORAL_TLS_KEY_FILE/],
  ['a client certificate of another CA', { TEMPORAL_TLS_CERT_FILE: 'intruder.pem', TEMPORAL_TLS_KEY_FILE: 'intruder.key' }, /refused the client certificate \(TEMPORAL_TLS_CERT_FILE\)|a client certificate it does not accept: TEMPORAL_TLS_CERT_FILE/],
  ['a server name the certificate is not valid for', { TEMPORAL_TLS_SERVER_NAME: 'other.test' }, /not valid for the name this service checks: the host of TEMPORAL_ADDRESS, or TEMPORAL_TLS_SERVER_NAME/],
  ['no server name (the certificate is not valid for 127.0.0.1)', { TEMPORAL_TLS_SERVER_NAME: '' }, /TEMPORAL_TLS_SERVER_NAME/],
  ['plain text', { TEMPORAL_TLS_CA_FILE: '', TEMPORAL_TLS_CERT_FILE: '', TEMPORAL_TLS_KEY_FILE: '', TEMPORAL_TLS_SERVER_NAME: '' }, /Temporal at 127\.0\.0\.1:\d+ could not be reached: .*TEMPORAL_TLS and its settings/],
])('the worker is refused with %s, and says which setting to look at', async (_case, changes, explanation) => {
  await expect(connectNativeTemporal(connectionFor(changedEnv(changes)))).rejects.toThrow(explanation);
}, 30_000);

test("the worker and the clients refuse a frontend whose certificate has expired, and say so", async () => {
  const expired = await ca.issue({ commonName: SERVER_NAME, usage: 'server', dnsNames: [SERVER_NAME], notBefore: new Date('2020-01-01T00:00:00Z'), notAfter: new Date('2021-01-01T00:00:00Z') });
  const [host, port] = temporal.address.split(':');
  const stale = await startTlsFront({ target: { host, port: Number(port) }, server: expired, clientCa: ca.cert });
  const options = connectionFor({ ...mtlsEnv(), TEMPORAL_ADDRESS: stale.address });
  const client = createTemporalClient({ ...options, namespace: 'default' });
  try {
    await expect(connectNativeTemporal(options)).rejects.toThrow(/the server's certificate has expired/);
    await expect(client.workflowService.getSystemInfo({})).rejects.toThrow(/certificate has expired/);
  } finally {
    await client.connection.close();
    await stale.close();
  }
  expect(stale.clients()).toEqual([]);
});

test.each([
  ['one certificate after the other', 'bundle.pem'],
  // As `cat` makes it of files without a final line break: -----END CERTIFICATE----------BEGIN CERTIFICATE-----
  ['glued on one line', 'glued-bundle.pem'],
])('a CA bundle, %s, is read whole: the CA that signed the frontend may come second', async (_case, bundle) => {
  const options = connectionFor(changedEnv({ TEMPORAL_TLS_CA_FILE: bundle }));
  const client = createTemporalClient({ ...options, namespace: 'default' });
  try {
    await (await connectNativeTemporal(options)).close();
    await expect(client.workflowService.getSystemInfo({})).resolves.toBeDefined();
  } finally {
    await client.connection.close();
  }
}, 30_000);

test('the worker is refused when it speaks TLS to a frontend without, and says so', async () => {
  const options = connectionFor({ TEMPORAL_ADDRESS: temporal.address, TEMPORAL_TLS_CA_FILE: file('ca.pem'), TEMPORAL_TLS_SERVER_NAME: SERVER_NAME });
  await expect(connectNativeTemporal(options)).rejects.toThrow(/the server speaks no TLS on this port/);
});

test.each([
  ['a CA that did not sign the server certificate', { TEMPORAL_TLS_CA_FILE: 'stranger-ca.pem' }, /self-signed certificate|unable to verify/],
  ['no client certificate', { TEMPORAL_TLS_CERT_FILE: '', TEMPORAL_TLS_KEY_FILE: '' }, /certificate required/],
  ['a server name the certificate is not valid for', { TEMPORAL_TLS_SERVER_NAME: 'other.test' }, /ERR_TLS_CERT_ALTNAME_INVALID/],
])("the clients' calls are refused with %s", async (_case, changes, error) => {
  const client = createTemporalClient({ ...connectionFor(changedEnv(changes)), namespace: 'default' });
  try {
    await expect(client.workflowService.getSystemInfo({})).rejects.toThrow(error);
  } finally {
    await client.connection.close();
  }
}, 30_000);

test('an API key reaches the frontend as `authorization: Bearer <key>` on the worker\'s and the clients\' calls', async () => {
  const server = await ca.issue({ commonName: SERVER_NAME, usage: 'server', dnsNames: [SERVER_NAME] });
  const endpoint = await startRecordingEndpoint(server);
  const options = connectionFor({ TEMPORAL_ADDRESS: endpoint.address, TEMPORAL_TLS_CA_FILE: file('ca.pem'), TEMPORAL_TLS_SERVER_NAME: SERVER_NAME, TEMPORAL_API_KEY: API_KEY });
  const client = createTemporalClient({ ...options, namespace: 'default' });
  try {
    // The fake frontend refuses every call as an authorizer refuses a bad key.
    await expect(connectNativeTemporal(options)).rejects.toThrow(/Unauthenticated|recorded/i);
    await expect(client.workflowService.getSystemInfo({})).rejects.toThrow(/UNAUTHENTICATED/);
  } finally {
    await client.connection.close();
    await endpoint.close();
  }
  const calls = endpoint.calls();
  expect(calls.map((call) => call.path)).toEqual(expect.arrayContaining(['/temporal.api.workflowservice.v1.WorkflowService/GetSystemInfo']));
  expect(calls.length).toBeGreaterThanOrEqual(2);
  for (const call of calls) expect(call.authorization).toBe(`Bearer ${API_KEY}`);
}, 30_000);
