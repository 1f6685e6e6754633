import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';
import { startSubscriber, type Subscriber } from '../../src/demo/subscriber-server';
import { RETENTION_SCHEDULE_ID } from '../../src/delivery-rules/retention';
import { WEBHOOK_EVENT_TYPES } from '../../src/webhooks/event-types';
import { findWebhookSchema } from '../../src/webhooks/schemas/catalogue';
import { projectRoot } from '../../src/config';
import { type AlertReceiver, startAlertReceiver } from '../../stack/alert-receiver';
import { isRunning, STACK_DESCRIPTION, type StackDescription } from '../../stack/description';
import { allPorts, freePortPlan, planPorts, type PortPlan } from '../../stack/ports';
import { UI_SERVER_ADDRESS } from '../../stack/topology';
import { composeAsWritten, imageVersion } from '../../stack/compose-file';
import { builtTools, temporalUiTools } from '../../stack/tools';
import { documentedResponses } from '../support/documented-responses';
import { eventually } from '../support/eventually';
import { LoginSession, signInThrough } from '../support/login-session';
import { requestFrom } from '../support/loopback-client';
import { PLATFORM_DONOR } from '../support/platform-donor';
import { rawExchange } from '../support/raw-http';

// `npm run test:stack`: the production-like stack, started with the command a user runs (dist/stack/main.js: real
// Temporal services on Postgres with SQL visibility, mTLS on the frontend, two API replicas behind Caddy, two
// delivery replicas) and driven from outside as a user would: platform calls through the balancer, a subscriber on
// loopback, the Temporal API with the stack's client certificate; then its edge as a caller and a local process meet
// it (what the balancer refuses, /metrics, forwarding headers, links); at the end Ctrl-C (SIGINT). It needs the
// Temporal server and Caddy built into .tools/ (`npm run stack` builds them once). STACK_TEST_BASE_PORT picks the
// ports (100 from it); STACK_TEST_TLS=off runs it without mTLS.

const TLS = process.env.STACK_TEST_TLS !== 'off';
const TEMPORAL_CLI = path.join(projectRoot, '.tools', 'venv', 'bin', 'temporal');
const EVENTS = 40;
const secret = `whsec_${randomBytes(32).toString('base64')}`;

let dataDir: string;
let ports: PortPlan;
let stack: StackDescription;
let launcher: ChildProcess;
let output = '';
let exited: Promise<number | null>;
let staff: { username: string; password: string };
let metricsToken: string;
let subscriber: Subscriber;
let temporal: Client;
let connection: Connection;
let alerts: AlertReceiver;

/** The ports of STACK_TEST_BASE_PORT, or a free block, with room for the subscriber at +90 and a second Temporal UI at +91. */
async function freePlan(): Promise<PortPlan> {
  const layout = { api: 2, delivery: 2, history: 1 };
  const given = Number(process.env.STACK_TEST_BASE_PORT);
  return given ? planPorts({ basePort: given, ...layout }) : freePortPlan(layout, [90, 91]);
}

/** `node dist/stack/main.js` in its own process group, as a terminal would start `npm run stack`. */
async function startStackCommand(): Promise<StackDescription> {
  const args = [`--base-port=${ports.balancer}`, `--data-dir=${dataDir}`, '--api=2', '--delivery=2', ...(TLS ? [] : ['--no-tls'])];
  launcher = spawn(process.execPath, [path.join(projectRoot, 'dist/stack/main.js'), ...args], {
    cwd: projectRoot,
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  launcher.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  launcher.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  exited = new Promise((resolve) => launcher.once('exit', (code) => resolve(code)));
  const description = path.join(dataDir, STACK_DESCRIPTION);
  await eventually(async () => launcher.exitCode === null ? existsSync(description) : Promise.reject(new Error(`the stack command exited:\n${output}`)), {
    what: `${description}; output so far:\n${output}`,
    timeoutMs: 300_000,
  });
  return JSON.parse(await readFile(description, 'utf8')) as StackDescription;
}

async function connectTemporal(): Promise<Connection> {
  return Connection.connect({
    address: stack.temporalAddress,
    tls: stack.tls && {
      serverNameOverride: stack.tls.serverName,
      serverRootCACertificate: readFileSync(stack.tls.ca),
      clientCertPair: { crt: readFileSync(stack.tls.cert), key: readFileSync(stack.tls.key) },
    },
  });
}

const secretFile = (name: string) => readFile(path.join(stack.secretsDir, `${name}.txt`), 'utf8').then((text) => text.trim());


async function staffToken(): Promise<string> {
  const response = await fetch(`${stack.apiUrl}/authentication/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(staff),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access: string }).access;
}

/** `name{labels} value` (or `name value`) lines of a Prometheus text page whose labels contain `labelFilter`, summed. */
async function metricSum(url: string, name: string, labelFilter: string): Promise<number> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${metricsToken}` } });
  expect(response.status).toBe(200);
  return (await response.text())
    .split('\n')
    .filter((line) => (line.startsWith(`${name}{`) || line.startsWith(`${name} `)) && line.includes(labelFilter))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

beforeAll(async () => {
  const missing = builtTools().filter((tool) => !existsSync(tool));
  if (missing.length > 0) throw new Error(`not built yet: ${missing.join(', ')}; \`npm run stack\` builds them once (about 12 min of CPU)`);
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'donation-webhooks-stack-'));
  // As root, Postgres runs as `postgres`, which must pass through the folder.
  await chmod(dataDir, 0o755);
  ports = await freePlan();
  stack = await startStackCommand();
  staff = { username: stack.staffUsername, password: await secretFile('admin-password') };
  metricsToken = await secretFile('metrics_token');
  subscriber = await startSubscriber({ port: ports.balancer + 90 });
  alerts = await startAlertReceiver(stack.alertReceiverUrl);
  connection = await connectTemporal();
  temporal = new Client({ connection, namespace: stack.namespace });
}, 600_000);

afterAll(async () => {
  await connection?.close().catch(() => undefined);
  await subscriber?.close();
  await alerts?.close();
  // Normally stopped by the last test; this is for a run that failed before it.
  if (launcher && launcher.exitCode === null) {
    launcher.kill('SIGINT');
    await exited;
  }
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}, 120_000);

test('platform calls through the balancer produce events that reach the subscriber signed and correct, relayed by the one delivery replica that leads', async () => {
  const token = await staffToken();
  const call = (method: string, route: string, body: unknown) =>
    fetch(`${stack.apiUrl}${route}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
  const endpoint = await call('PUT', '/admin/api/webhook-endpoint', {
    url: subscriber.url,
    active: true,
    payload_version: 'v2.1',
    events: WEBHOOK_EVENT_TYPES,
    signing_secret: secret,
  });
  expect(endpoint.status).toBe(200);

  // Amount i + 1 for transaction i, a few calls at once, as the callers of both API replicas make them.
  const sent = new Map(Array.from({ length: EVENTS }, (_, i) => [`stack-${process.pid}-${i}`, i + 1]));
  const queue = [...sent];
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        const [transactionId, amount] = next;
        const response = await call('POST', '/platform/checkouts', {
          environment: 'PRODUCTION',
          currency: 'CHF',
          donor: PLATFORM_DONOR,
          positions: [{ amount }],
          payment: { transaction_id: transactionId, method: 'TWI', status: 'completed' },
        });
        expect(response.status).toBe(201);
      }
    }),
  );

  const requests = await subscriber.waitForRequests(EVENTS);
  const delivered = new Map<string, number>();
  for (const request of requests) {
    const body = request.body.toString('utf8');
    // The subscriber's own check, with the Standard Webhooks library: throws on a wrong or missing signature.
    const envelope = new Webhook(secret).verify(body, request.headers as Record<string, string>) as {
      event: string;
      environment: string;
      data: { donation: { amount: number; payment: { transaction_id: string } } };
    };
    expect(findWebhookSchema('v2.1', envelope.event)?.schema.safeParse(envelope).success).toBe(true);
    expect([envelope.event, envelope.environment]).toEqual(['donation.completed', 'prod']);
    delivered.set(envelope.data.donation.payment.transaction_id, envelope.data.donation.amount);
  }
  expect(delivered).toEqual(sent);
  expect(subscriber.requests).toHaveLength(EVENTS);

  const deliveredBy = await Promise.all(
    stack.ports.delivery.map((port) => metricSum(`http://127.0.0.1:${port}/metrics`, 'webhook_deliveries_total', 'outcome="delivered"')),
  );
  expect(deliveredBy.reduce((a, b) => a + b, 0)).toBe(EVENTS);
  // One relay leads (docs/delivery.md#the-path-of-an-event); where its starts are eager its own worker runs their
  // first attempts, the other's worker what Temporal hands it.
  const leading = await Promise.all(stack.ports.delivery.map((port) => metricSum(`http://127.0.0.1:${port}/metrics`, 'webhook_relay_leading', '')));
  expect([...leading].sort((a, b) => a - b)).toEqual([0, 1]);
  // Caddy spread the calls over both API replicas.
  const servedBy = await Promise.all(
    stack.ports.api.map((port) => metricSum(`http://127.0.0.1:${port}/metrics`, 'http_request_duration_seconds_count', 'checkouts')),
  );
  expect(servedBy.every((count) => count > 0)).toBe(true);
}, 180_000);

test('SQL visibility finds the delivery workflows by their search attributes', async () => {
  const count = (query: string) => temporal.workflow.count(query).then(({ count }) => count);
  await eventually(async () => (await count('WebhookStatus = "delivered"')) === EVENTS, {
    what: `${EVENTS} workflows with WebhookStatus = "delivered"`,
    timeoutMs: 30_000,
  });
  expect(await count('WebhookStatus = "delivered" AND WebhookEventType = "donation.completed" AND WebhookAttempts = 1')).toBe(EVENTS);
  expect(await count('WebhookStatus = "max_retries_reached"')).toBe(0);
  // Temporal UI lists them too, through its own connection to the frontend, for an operator signed in to it.
  const session = new LoginSession();
  const listed = await session.request(
    `${stack.temporalUiUrl}/api/v1/namespaces/${stack.namespace}/workflows?query=${encodeURIComponent('WebhookStatus = "delivered"')}`,
    { headers: await signInToUi(session) },
  );
  expect(listed.status).toBe(200);
  expect(((await listed.json()) as { executions: unknown[] }).executions).toHaveLength(EVENTS);
  // Answered from Postgres: the rows are in the stack's temporal_visibility database.
  const password = (await readFile(path.join(dataDir, 'postgres-password.txt'), 'utf8')).trim();
  const visibility = new pg.Client({ host: '127.0.0.1', port: ports.postgres, user: 'postgres', password, database: 'temporal_visibility' });
  await visibility.connect();
  try {
    const { rows } = await visibility.query("SELECT count(*)::int AS n FROM executions_visibility WHERE workflow_type_name = 'deliverEvent'");
    expect(rows[0].n).toBe(EVENTS);
  } finally {
    await visibility.end();
  }
});

/** A workflow no worker polls: it stays running, so a write through the UI that got through would show. */
async function idleWorkflow(idSuffix = '') {
  const workflowId = `ui-write-check-${randomBytes(4).toString('hex')}${idSuffix}`;
  return temporal.workflow.start('noSuchWorkflow', { taskQueue: 'ui-write-check', workflowId });
}

/** The Temporal UI's write operations on one workflow. */
const uiWrites = (ui: string, workflowId: string) => {
  const base = `${ui}/api/v1/namespaces/${stack.namespace}`;
  return [
    `${base}/workflows/${workflowId}/terminate`,
    `${base}/workflows/${workflowId}/cancel`,
    `${base}/workflows/${workflowId}/signal/anything`,
    `${base}/workflows/${workflowId}/reset`,
    `${base}/batch-operations/ui-write-check`,
  ];
};

/** A POST to the UI's API as its own page sends one: JSON, its CSRF cookie sent back as its header, and `headers`. */
async function uiPost(session: LoginSession, url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const ui = new URL(url).origin;
  if (!session.cookies(ui).has('_csrf')) expect((await session.request(`${ui}/api/v1/settings`)).status).toBe(200);
  return session.request(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-CSRF-TOKEN': session.cookies(ui).get('_csrf')!, ...headers },
    body: JSON.stringify(body),
  });
}

/** What a terminate takes: the API refuses fields its request does not have (400). */
const WRITE_BODY = { reason: 'probe' };

/** A write through the UI (uiPost), answered with its status. */
async function uiWrite(session: LoginSession, url: string, headers: Record<string, string> = {}): Promise<number> {
  return (await uiPost(session, url, WRITE_BODY, headers)).status;
}

/**
 * The scripted OpenID login at the stack's UI: the UI sends the browser to the provider, the form is posted, the code
 * comes back to the UI, which sets its user cookies. Resolves to the headers the UI's page sends from them.
 */
async function signInToUi(session: LoginSession): Promise<Record<string, string>> {
  const ui = stack.temporalUiUrl;
  const operator = { username: stack.temporalUiLogin.username, password: (await readFile(stack.temporalUiLogin.passwordFile, 'utf8')).trim() };
  const landed = await signInThrough(session, `${ui}/auth/sso`, operator);
  expect([landed.url, landed.response.status]).toEqual([`${ui}/`, 200]);
  const userCookies = [...session.cookies(ui)]
    .filter(([name]) => /^user\d+$/.test(name))
    .sort(([a], [b]) => a.localeCompare(b, 'en', { numeric: true }));
  const user = JSON.parse(Buffer.from(userCookies.map(([, value]) => decodeURIComponent(value)).join(''), 'base64').toString()) as {
    AccessToken: string;
    IDToken: string;
  };
  return { Authorization: `Bearer ${user.AccessToken}`, 'Authorization-Extras': user.IDToken };
}

test('Temporal UI answers nothing without an OpenID login, reads after one, and stays read-only (write actions off)', async () => {
  const handle = await idleWorkflow();
  const { workflowId } = handle;
  const ui = stack.temporalUiUrl;
  const base = `${ui}/api/v1/namespaces/${stack.namespace}`;
  const list = `${base}/workflows?${new URLSearchParams({ query: `WorkflowId="${workflowId}"` }).toString()}`;

  // Without a login: no read, whatever token is made up (one shaped as the provider's, signed by no key of it).
  const anonymous = new LoginSession();
  const [header, payload] = ['{"alg":"RS256","typ":"JWT"}', `{"iss":"${stack.temporalUiLogin.issuer}","aud":"temporal-ui","sub":"x","exp":9999999999}`].map(
    (part) => Buffer.from(part).toString('base64url'),
  );
  const forged = `${header}.${payload}.${randomBytes(256).toString('base64url')}`;
  const madeUp: Array<Record<string, string>> = [{}, { Authorization: 'Bearer anything' }, { Authorization: `Bearer ${forged}`, 'Authorization-Extras': forged }];
  for (const headers of madeUp) {
    expect([headers, (await anonymous.request(list, { headers })).status]).toEqual([headers, 401]);
    expect([headers, (await anonymous.request(`${base}/workflows/${workflowId}`, { headers })).status]).toEqual([headers, 401]);
  }
  // Nor a write (refused here by the write guard, before the login is looked at).
  for (const url of uiWrites(ui, workflowId)) expect([url, await uiWrite(anonymous, url)]).toEqual([url, 405]);
  // A wrong password gets the form again.
  const refused = await signInThrough(new LoginSession(), `${ui}/auth/sso`, { username: stack.temporalUiLogin.username, password: 'not-the-password' });
  expect(refused.response.status).toBe(401);
  expect((await handle.describe()).status.name).toBe('RUNNING');

  // After the login: the workflow can be read.
  const session = new LoginSession();
  const signedIn = await signInToUi(session);
  const read = await session.request(list, { headers: signedIn });
  expect(read.status).toBe(200);
  expect(JSON.stringify(await read.json())).toContain(workflowId);

  // Signed in, still read-only: TEMPORAL_DISABLE_WRITE_ACTIONS=true, as Compose has it.
  for (const url of uiWrites(ui, workflowId)) expect([url, await uiWrite(session, url, signedIn)]).toEqual([url, 405]);
  expect((await handle.describe()).status.name).toBe('RUNNING');
  // The CLI's way (the client certificate) still acts.
  await handle.terminate('cleanup');
  expect((await handle.describe()).status.name).toBe('TERMINATED');
});

/** A write through the UI with its path sent byte for byte (fetch would resolve "." and ".." segments). */
async function rawUiWrite(session: LoginSession, rawPath: string, headers: Record<string, string>): Promise<number> {
  const ui = stack.temporalUiUrl;
  const body = JSON.stringify(WRITE_BODY);
  const cookie = [...session.cookies(ui)].map(([name, value]) => `${name}=${value}`).join('; ');
  const lines = Object.entries({ ...headers, 'X-CSRF-TOKEN': session.cookies(ui).get('_csrf')!, Cookie: cookie }).map(([name, value]) => `${name}: ${value}\r\n`);
  const request = `POST ${rawPath} HTTP/1.1\r\nHost: ${new URL(ui).host}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n${lines.join('')}\r\n${body}`;
  return (await rawExchange(ui, request)).status;
}

test('the guard in front of the UI refuses writes spelled past the UI server’s read-only check, and a login returning off-site', async () => {
  const session = new LoginSession();
  const signedIn = await signInToUi(session);
  expect((await session.request(`${stack.temporalUiUrl}/api/v1/settings`)).status).toBe(200);
  const workflows = `/api/v1/namespaces/${stack.namespace}/workflows`;
  // The UI server lets through any POST whose decoded path holds "/workflows/" and "/query/": an id with "/query/" in
  // it, sent encoded, or a workflow named "query", made the write a query to it.
  const handle = await idleWorkflow('/query/x');
  const id = encodeURIComponent(handle.workflowId);
  const plainId = handle.workflowId.split('/')[0];
  const spellings = [
    `${workflows}/${id}/terminate`,
    `${workflows}/${id.replaceAll('%2F', '%2f')}/terminate`,
    `${workflows}/${id}/signal/anything`,
    `${workflows}/${id}/cancel`,
    `${workflows}/query/terminate`,
    `${workflows}/${plainId}%2Fquery%2Fx/terminate`,
    `${workflows}/${plainId}/query/../../${id}/terminate`,
    `${workflows}/${plainId}/query/%2e%2e/%2e%2e/${id}/terminate`,
    `${workflows}/${id}/query//terminate`,
    `${workflows}/${id}/query/x%5C..%5Cterminate`,
  ];
  for (const rawPath of spellings) expect([rawPath, await rawUiWrite(session, rawPath, signedIn)]).toEqual([rawPath, 405]);
  // Thirty at once, each spelling, are refused the same.
  const parallel = await Promise.all(Array.from({ length: 30 }, (_, index) => rawUiWrite(session, spellings[index % spellings.length], signedIn)));
  expect(parallel).toEqual(Array<number>(30).fill(405));
  expect((await handle.describe()).status.name).toBe('RUNNING');
  await handle.terminate('cleanup');

  // What the UI's own page sends in read-only mode still passes: a workflow query (its stack trace tab), here to a
  // delivered workflow, which a delivery replica replays to answer.
  let delivered: { workflowId: string; runId: string } | undefined;
  for await (const execution of temporal.workflow.list({ query: 'WebhookStatus = "delivered"', pageSize: 1 })) {
    delivered = execution;
    break;
  }
  if (!delivered) throw new Error('no delivered workflow to query (the first test delivers some)');
  const stackTrace = await uiPost(
    session,
    `${stack.temporalUiUrl}${workflows}/${encodeURIComponent(delivered.workflowId)}/query/__stack_trace`,
    { execution: { runId: delivered.runId } },
    signedIn,
  );
  expect([stackTrace.status, await stackTrace.text()]).toEqual([200, expect.stringContaining('queryResult')]);

  // The login's return address: a path on the UI only. The UI server's own check let these through to a redirect off-site.
  const signIn = (returnUrl: string) => new LoginSession().request(`${stack.temporalUiUrl}/auth/sso?${new URLSearchParams({ returnUrl }).toString()}`);
  for (const returnUrl of [' //evil.example', '/\\evil.example', '/\t/evil.example', '//evil.example', 'https://evil.example/']) {
    const answer = await signIn(returnUrl);
    expect([returnUrl, answer.status, answer.headers.get('location')]).toEqual([returnUrl, 400, null]);
  }
  const ui = stack.temporalUiUrl;
  for (const returnUrl of [`${ui}@evil.example/`, `${ui}.evil.example/`, `http://${UI_SERVER_ADDRESS}:${ports.uiServer}/`]) {
    expect([returnUrl, (await signIn(returnUrl)).status]).toEqual([returnUrl, 400]);
  }
  // A path, or the UI's own address, which its page's sign-in button sends: on to the provider.
  for (const returnUrl of [`/namespaces/${stack.namespace}/workflows`, `${ui}/`]) {
    const answer = await signIn(returnUrl);
    expect([returnUrl, answer.status, new URL(answer.headers.get('location') ?? '', ui).origin]).toEqual([returnUrl, 302, stack.temporalUiLogin.issuer]);
  }
  const operator = { username: stack.temporalUiLogin.username, password: (await readFile(stack.temporalUiLogin.passwordFile, 'utf8')).trim() };
  const home = await signInThrough(new LoginSession(), `${ui}/auth/sso?${new URLSearchParams({ returnUrl: `${ui}/` }).toString()}`, operator);
  expect([home.url, home.response.status]).toEqual([`${ui}/`, 200]);
  // A login begun at the UI server's own address, around the guard: its cookies are not the guard's host's, so the
  // callback through the guard refuses it rather than following its returnUrl.
  const around = await signInThrough(new LoginSession(), `http://${UI_SERVER_ADDRESS}:${ports.uiServer}/auth/sso?returnUrl=%20//evil.example/`, operator);
  expect([new URL(around.url).pathname, around.response.status]).toEqual(['/auth/sso/callback', 400]);
  // A login whose cookies carry another return address (anything that can set a cookie for this host name could
  // write them): the UI server would follow it at the callback; the guard refuses it there.
  const forging = new LoginSession();
  const begun = await forging.request(`${ui}/auth/sso?returnUrl=%2F`);
  const authorization = new URL(begun.headers.get('location') ?? '');
  const nonce = Buffer.from(JSON.stringify({ nonce: randomBytes(16).toString('base64url'), return_url: 'https://evil.example/phish' })).toString('base64url');
  authorization.searchParams.set('nonce', nonce);
  forging.cookies(ui).set('nonce', nonce);
  const forged = await signInThrough(forging, authorization.href, operator);
  expect([new URL(forged.url).pathname, forged.response.status, await forged.response.json()]).toEqual([
    '/auth/sso/callback',
    400,
    { message: expect.stringContaining('leads off this server') },
  ]);
  expect([...forging.cookies(ui).keys()].filter((name) => /^user\d+$/.test(name))).toEqual([]);
  // A callback the UI server cannot use, escapes that are not UTF-8 text, and a read of a path that has only a write:
  // 4xx, not its 500, 503 and 501.
  for (const notText of [`${workflows}/%ff`, `${workflows}/%25ff`, `${workflows}/%00`, `${workflows}?query=%ff`]) {
    expect([notText, (await session.request(`${ui}${notText}`, { headers: signedIn })).status]).toEqual([notText, 400]);
  }
  const stale = await new LoginSession().request(`${ui}/auth/sso/callback?state=abc&code=zz`, { headers: { Cookie: 'state=abc' } });
  expect([stale.status, await stale.json()]).toEqual([400, { message: expect.stringContaining('sign in again') }]);
  expect((await session.request(`${ui}${workflows}/${id}/terminate`, { headers: signedIn })).status).toBe(405);
});

test('with write actions on (TEMPORAL_DISABLE_WRITE_ACTIONS=false), the login alone guards them: refused without, done with', async () => {
  // A second UI server beside the stack's, as an operator who turned write actions on would run it: the same
  // frontend and client certificate, the same provider and client; only its port and that one setting differ.
  const port = ports.balancer + 91;
  const ui = temporalUiTools(imageVersion(composeAsWritten().services['temporal-ui']));
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    TEMPORAL_ADDRESS: stack.temporalAddress,
    TEMPORAL_UI_PORT: String(port),
    TEMPORAL_DEFAULT_NAMESPACE: stack.namespace,
    ...(stack.tls ? { TEMPORAL_TLS_CA: stack.tls.ca, TEMPORAL_TLS_CERT: stack.tls.cert, TEMPORAL_TLS_KEY: stack.tls.key, TEMPORAL_TLS_SERVER_NAME: stack.tls.serverName } : {}),
    TEMPORAL_AUTH_ENABLED: 'true',
    TEMPORAL_AUTH_PROVIDER_URL: stack.temporalUiLogin.issuer,
    TEMPORAL_AUTH_CLIENT_ID: 'temporal-ui',
    TEMPORAL_AUTH_CLIENT_SECRET: await secretFile('temporal_auth_client_secret'),
    TEMPORAL_AUTH_CALLBACK_URL: `${stack.temporalUiUrl}/auth/sso/callback`,
    TEMPORAL_AUTH_SCOPES: 'openid,profile,email',
    TEMPORAL_DISABLE_WRITE_ACTIONS: 'false',
  };
  const writable = spawn(ui.server, ['--root', ui.root, '--config', 'config', '--env', 'docker', 'start'], { env, stdio: 'ignore' });
  try {
    const origin = `http://127.0.0.1:${port}`;
    await eventually(async () => (await fetch(`${origin}/healthz`).catch(() => undefined))?.ok === true, { what: `${origin}/healthz`, timeoutMs: 30_000 });
    const handle = await idleWorkflow();
    const [terminate] = uiWrites(origin, handle.workflowId);

    // Without a login, the write reaches the login check and stops there.
    expect(await uiWrite(new LoginSession(), terminate)).toBe(401);
    expect(await uiWrite(new LoginSession(), terminate, { Authorization: 'Bearer anything' })).toBe(401);
    expect((await handle.describe()).status.name).toBe('RUNNING');

    // Signed in (at the stack's UI: the same provider and client), the terminate goes through this one.
    const session = new LoginSession();
    const signedIn = await signInToUi(session);
    expect(await uiWrite(session, terminate, signedIn)).toBe(200);
    expect((await handle.describe()).status.name).toBe('TERMINATED');
  } finally {
    writable.kill('SIGTERM');
  }
});

test('nothing of the stack listens beyond loopback', async () => {
  const addresses = Object.values(os.networkInterfaces())
    .flat()
    .filter((address) => address && !address.internal && !address.address.startsWith('fe80:'))
    .map((address) => address!.address);
  const reachable = (host: string, port: number) =>
    new Promise<boolean>((resolve) => {
      const socket = net.connect(port, host);
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
  const open = [];
  for (const host of addresses) for (const port of allPorts(ports)) if (await reachable(host, port)) open.push(`${host}:${port}`);
  expect(open).toEqual([]);
});

test('the workers created the retention schedule', async () => {
  const schedule = await temporal.schedule.getHandle(RETENTION_SCHEDULE_ID).describe();
  expect(schedule.action).toMatchObject({ type: 'startWorkflow', workflowType: 'purgeEndedEvents', taskQueue: stack.taskQueue });
});

(TLS ? test : test.skip)('the frontend refuses clients without the stack’s client certificate', async () => {
  const certificates = stack.tls!;
  const health = (args: string[]) =>
    promisify(execFile)(TEMPORAL_CLI, ['operator', 'cluster', 'health', '--address', stack.temporalAddress, ...args]).then(
      ({ stdout }) => stdout,
      (err: { stdout: string; stderr: string }) => `${err.stdout}${err.stderr}`,
    );
  const ca = ['--tls-ca-path', certificates.ca, '--tls-server-name', certificates.serverName];
  expect(await health([])).toMatch(/requires TLS/);
  expect(await health(ca)).toMatch(/requires client certificates \(mTLS\)/);
  expect(await health([...ca, '--tls-cert-path', certificates.cert, '--tls-key-path', certificates.key])).toMatch(/\bSERVING\b/);
  // The SDK, as the service connects: without the client certificate no call gets through.
  const withoutCertificate = await Connection.connect({
    address: stack.temporalAddress,
    connectTimeout: 5_000,
    tls: { serverNameOverride: certificates.serverName, serverRootCACertificate: readFileSync(certificates.ca) },
  }).then(
    async (other) => {
      try {
        return await other.workflowService.getSystemInfo({});
      } finally {
        await other.close();
      }
    },
    (err: Error) => err,
  );
  expect(withoutCertificate).toBeInstanceOf(Error);
  expect(await connection.workflowService.getSystemInfo({})).toHaveProperty('serverVersion');
});

test('/metrics through the balancer is the documented 404 in the service’s error shape, in any spelling, token or not', async () => {
  const documented = await documentedResponses(stack.apiUrl);
  for (const spelling of ['/metrics', '/METRICS', '/metrics/', '/metrics.txt', '/metrics?name[]=up', '//metrics', '/%6Detrics']) {
    for (const headers of [{}, { authorization: `Bearer ${metricsToken}` }] as Array<Record<string, string>>) {
      const response = await fetch(`${stack.apiUrl}${spelling}`, { headers });
      expect([spelling, response.status, response.headers.get('content-type')]).toEqual([spelling, 404, 'application/json; charset=utf-8']);
      const body = (await response.json()) as { code: string };
      expect([spelling, body.code, documented.errors('get', '/metrics', 404, body)]).toEqual([spelling, 'not_found', []]);
    }
  }
});

test('what reaches the balancer malformed is refused by its HTTP server before Caddy proxies it: Go’s plain text (docs/operations.md)', async () => {
  const headerLines = (bytes: number) => Array.from({ length: bytes / 1000 }, (_, i) => `X-Pad-${i}: ${'a'.repeat(990)}\r\n`).join('');
  const refusals: Array<[string, string, number, string]> = [
    ['an unknown transfer coding', 'POST /platform/checkouts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n', 501, 'Unsupported transfer encoding'],
    ['two different lengths', 'POST /platform/checkouts HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}}', 400, '400 Bad Request'],
    ['two Host fields', 'GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n', 400, '400 Bad Request'],
    ['2 MB of headers', `GET /healthz HTTP/1.1\r\nHost: x\r\n${headerLines(2_000_000)}\r\n`, 431, '431 Request Header Fields Too Large'],
  ];
  for (const [what, request, status, body] of refusals) {
    const answer = await rawExchange(stack.apiUrl, request);
    // Without `Via`, which Caddy adds to every answer it passes on from a replica.
    expect([what, answer.status, answer.headers['content-type'], answer.headers.connection, answer.headers.via, answer.body]).toEqual([
      what,
      status,
      'text/plain; charset=utf-8',
      'close',
      undefined,
      body,
    ]);
  }
  // Headers over the service's limit and under Caddy's reach a replica, which refuses them in JSON.
  const large = await rawExchange(stack.apiUrl, `GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${headerLines(100_000)}\r\n`);
  expect([large.status, large.headers.via, JSON.parse(large.body).code]).toEqual([431, '1.1 Caddy', 'headers_too_large']);
});

test('a forged X-Forwarded-For sent straight to a replica buys no fresh login budget; through the balancer the caller’s own address counts', async () => {
  const failedLogins = async (url: string, from: string, username: string, count: number) => {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) {
      const response = await requestFrom(from, `${url}/authentication/create`, {
        method: 'POST',
        // A new address each time: believed, each would start a budget of its own.
        headers: { 'X-Forwarded-For': `203.0.113.${i + 1}` },
        body: { username, password: 'not-the-password' },
      });
      statuses.push(response.status);
    }
    return statuses;
  };
  const limited = [...Array<number>(10).fill(401), 429];
  // A process of this host, where every process connects from 127.0.0.1; Caddy alone connects from 127.0.0.2.
  expect(await failedLogins(`http://127.0.0.1:${stack.ports.api[0]}`, '127.0.0.1', 'straight-to-a-replica', 11)).toEqual(limited);
  // Through Caddy, which replaces X-Forwarded-For with the address the caller connected from.
  expect(await failedLogins(stack.apiUrl, '127.0.0.3', 'through-the-balancer', 11)).toEqual(limited);
  expect(await failedLogins(stack.apiUrl, '127.0.0.4', 'through-the-balancer', 1)).toEqual([401]);
});

test('links are built from PUBLIC_URL, the balancer’s address, whatever Host or X-Forwarded-Host the caller sends', async () => {
  const token = await staffToken();
  const forged: Array<Record<string, string>> = [{ Host: 'evil.invalid' }, { 'X-Forwarded-Host': 'evil.invalid' }, { Host: 'evil.invalid', 'X-Forwarded-Host': 'evil.invalid:8443' }];
  for (const headers of forged) {
    const page = await requestFrom('127.0.0.1', `${stack.apiUrl}/admin/api/webhook-events?page=2&page_size=5`, {
      headers: { ...headers, authorization: `Bearer ${token}` },
    });
    expect(page.status).toBe(200);
    expect([page.body.next, page.body.previous]).toEqual([
      `${stack.apiUrl}/admin/api/webhook-events?page=3&page_size=5`,
      `${stack.apiUrl}/admin/api/webhook-events?page=1&page_size=5`,
    ]);
  }
});

/** A JSON answer of one of the stack's HTTP APIs (Prometheus, Jaeger). */
async function getJson<T>(url: string): Promise<T> {
  const response = await fetch(url);
  expect([url, response.status]).toEqual([url, 200]);
  return (await response.json()) as T;
}

test('Prometheus scrapes every process of the stack, the application with its metrics token, and has the alert rules loaded', async () => {
  interface Target { labels: { job: string; instance: string }; health: string; lastError: string }
  const expected = [
    ...stack.ports.api.map((port) => `api 127.0.0.1:${port}`),
    ...stack.ports.delivery.map((port) => `delivery 127.0.0.1:${port}`),
    ...Object.values(stack.ports.temporalMetrics).map((port) => `temporal 127.0.0.1:${port}`),
    `jaeger ${new URL(stack.jaegerUrl).hostname}:${ports.jaeger.metrics}`,
    `alertmanager ${new URL(stack.alertmanagerUrl).host}`,
    `prometheus ${new URL(stack.prometheusUrl).host}`,
  ].sort();
  let targets: Target[] = [];
  await eventually(
    async () => {
      targets = (await getJson<{ data: { activeTargets: Target[] } }>(`${stack.prometheusUrl}/api/v1/targets`)).data.activeTargets;
      return targets.length === expected.length && targets.every((target) => target.health === 'up');
    },
    { timeoutMs: 60_000, what: () => `every target up: ${JSON.stringify(targets.map(({ labels, health, lastError }) => [labels.instance, health, lastError]))}` },
  );
  expect(targets.map(({ labels }) => `${labels.job} ${labels.instance}`).sort()).toEqual(expected);

  interface RuleGroup { file: string; rules: Array<{ name: string; health: string }> }
  const { groups } = (await getJson<{ data: { groups: RuleGroup[] } }>(`${stack.prometheusUrl}/api/v1/rules`)).data;
  const shipped = readdirSync(path.join(projectRoot, 'deploy/prometheus/alerts')).sort();
  expect([...new Set(groups.map(({ file }) => path.basename(file)))].sort()).toEqual(shipped);
  const rules = groups.flatMap((group) => group.rules);
  expect(rules.map(({ name }) => name)).toEqual(expect.arrayContaining(['WebhookEventsStuck', 'WebhookDeliveriesFailing', 'TemporalNoWorkerPolling', 'Watchdog']));
  expect(rules.filter(({ health }) => health === 'err')).toEqual([]);
}, 120_000);

test('Alertmanager notifies the receiver of a firing alert: the always-firing Watchdog, through Prometheus', async () => {
  // Prometheus evaluates every 15 s and Alertmanager waits 30 s to group the first notification.
  const notification = await alerts.waitFor('Watchdog', 'firing', 150_000);
  expect(notification.status).toBe('firing');
  // Nothing else fires on a healthy stack.
  const firing = await getJson<{ data: { alerts: Array<{ labels: { alertname: string }; state: string }> } }>(`${stack.prometheusUrl}/api/v1/alerts`);
  expect(firing.data.alerts.filter(({ state }) => state === 'firing').map(({ labels }) => labels.alertname)).toEqual(['Watchdog']);
}, 180_000);

test('the Temporal server’s own services send their traces to the stack’s Jaeger', async () => {
  await eventually(
    async () => {
      const { data } = await getJson<{ data: string[] | null }>(`${stack.jaegerUrl}/api/services`);
      return ['temporal.frontend', 'temporal.history', 'temporal.matching'].every((name) => data?.includes(name));
    },
    { timeoutMs: 60_000, what: 'the Temporal services in Jaeger’s service list' },
  );
}, 90_000);

/**
 * One platform call as one trace in Jaeger: the API's server span (with its route template), the delivery
 * workflow's and activity's spans of Temporal's OpenTelemetry interceptors, and the attempt's CLIENT span to the
 * subscriber. Needs the application's tracing (OTEL_* settings, docs/observability.md#jaeger).
 */
test('a checkout through the balancer is one trace in Jaeger, from the API’s span to the attempt’s client span', async () => {
  interface JaegerSpan { operationName: string; tags: Array<{ key: string; value: unknown }> }
  const tag = (span: JaegerSpan, key: string) => span.tags.find((each) => each.key === key)?.value;
  const complete = (spans: JaegerSpan[]) =>
    spans.some((span) => tag(span, 'span.kind') === 'server' && tag(span, 'http.route')) &&
    spans.some((span) => span.operationName.startsWith('RunWorkflow:')) &&
    spans.some((span) => span.operationName.startsWith('RunActivity:')) &&
    spans.some((span) => tag(span, 'span.kind') === 'client' && tag(span, 'url.full') === subscriber.url);
  let found = 0;
  const trace = await eventually(
    async () => {
      const { data } = await getJson<{ data: Array<{ spans: JaegerSpan[]; processes: Record<string, { serviceName: string }> }> }>(
        `${stack.jaegerUrl}/api/traces?service=donation-webhooks-api&lookback=1h&limit=500`,
      );
      found = data.length;
      return data.find(({ spans }) => complete(spans));
    },
    { timeoutMs: 60_000, what: () => `a complete checkout trace among ${found} traces of donation-webhooks-api` },
  );
  const services = new Set(Object.values(trace.processes).map(({ serviceName }) => serviceName));
  expect(services).toEqual(new Set(['donation-webhooks-api', 'donation-webhooks-delivery']));
}, 120_000);

test('Ctrl-C stops every process of the stack, the application before Temporal before Postgres', async () => {
  await connection.close();
  // A terminal's Ctrl-C goes to the foreground process group: the command's own, not the stack's processes.
  process.kill(-launcher.pid!, 'SIGINT');
  expect(await exited).toBe(0);
  expect(Object.entries(stack.processes).filter(([, pid]) => isRunning(pid))).toEqual([]);
  const order = [...output.matchAll(/^ {2}stopped (\S+)/gm)].map(([, name]) => name);
  expect(order.slice(0, 7)).toEqual(['prometheus', 'alertmanager', 'proxy', 'api-2', 'api-1', 'delivery-2', 'delivery-1']);
  // Jaeger after Temporal, whose last spans it still takes.
  expect(order.slice(-2)).toEqual(['jaeger', 'postgres']);
  expect(existsSync(path.join(dataDir, STACK_DESCRIPTION))).toBe(false);
}, 120_000);
