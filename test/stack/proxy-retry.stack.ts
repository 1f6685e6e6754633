import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { projectRoot } from '../../src/config';
import { composeAsWritten, imageVersion } from '../../stack/compose-file';
import { caddyTools } from '../../stack/tools';
import { localCaddyfile } from '../../stack/topology';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';

// Compose's Caddyfile (as the stack runs it) in front of stand-ins for API replicas: what Caddy sends again, and to
// whom, when a replica is not there or dies with a request in flight. Needs the Caddy that `npm run stack` builds
// into .tools/.

const caddy = caddyTools(imageVersion(composeAsWritten().services.proxy)).caddy;
const composeCaddyfile = readFileSync(path.join(projectRoot, 'deploy/caddy/Caddyfile'), 'utf8');
let dir: string;
const stopAtEnd: Array<() => unknown> = [];

beforeAll(async () => {
  if (!existsSync(caddy)) throw new Error(`not built yet: ${caddy}; \`npm run stack\` builds it once`);
  dir = await mkdtemp(path.join(os.tmpdir(), 'proxy-retry-'));
});

afterEach(async () => {
  for (const stop of stopAtEnd.splice(0)) await stop();
});

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Caddy with Compose's Caddyfile in front of these replica addresses; its URL once it answers. */
async function startProxy(upstreams: string[]): Promise<string> {
  const listen = await freePort();
  const caddyfile = path.join(dir, `Caddyfile-${listen}`);
  await writeFile(caddyfile, localCaddyfile(composeCaddyfile, listen, upstreams));
  const proxy = spawn(caddy, ['run', '--adapter', 'caddyfile', '--config', caddyfile], {
    env: { HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
    stdio: 'ignore',
  });
  stopAtEnd.push(() => proxy.kill('SIGTERM'));
  const url = `http://127.0.0.1:${listen}`;
  // /metrics is Caddy's own answer: it listens once that comes.
  await eventually(async () => (await fetch(`${url}/metrics`).catch(() => undefined))?.status === 404, { what: 'Caddy' });
  return url;
}

test('POSTs that Caddy offers to a replica refusing connections reach the other replica with their bodies', async () => {
  const received: string[] = [];
  const replica = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(201, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => replica.listen(0, '127.0.0.1', resolve));
  stopAtEnd.push(() => new Promise((resolve) => replica.close(resolve)));
  const live = (replica.address() as { port: number }).port;
  // The refusing replica first: round robin offers it the first request. A path that is not replayed after a
  // dropped connection: a request that never reached a replica is sent again whatever it is.
  const proxyUrl = await startProxy([`127.0.0.1:${await freePort()}`, `127.0.0.1:${live}`]);
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) {
    const response = await fetch(`${proxyUrl}/admin/api/webhook-endpoint/test-events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ call: i }),
    });
    statuses.push(response.status);
  }
  expect(statuses).toEqual([201, 201, 201, 201, 201, 201]);
  expect(received).toEqual(Array.from({ length: 6 }, (_, i) => JSON.stringify({ call: i })));
}, 60_000);

/**
 * A stand-in replica in a process of its own, so that it can be killed: it answers a request with `X-Warm-Up` at once;
 * any other one it prints as a JSON line (`Received`) and holds until a line arrives on stdin, then answers every held
 * request with 201 and the body it got.
 */
const REPLICA = `
const http = require('node:http');
const used = new WeakSet();
const held = [];
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const keptAlive = used.has(req.socket);
    used.add(req.socket);
    if (req.headers['x-warm-up']) return res.end('warm');
    console.log(JSON.stringify({ method: req.method, url: req.url, body, keptAlive }));
    held.push([res, body]);
  });
});
server.keepAliveTimeout = 600000;
server.listen(0, '127.0.0.1', () => console.log('listening ' + server.address().port));
process.stdin.on('data', () => {
  for (const [res, body] of held.splice(0)) res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ body }));
});
`;

interface Received {
  method: string;
  url: string;
  body: string;
  /** Its connection had served a request before. */
  keptAlive: boolean;
}

interface Replica {
  child: ChildProcess;
  port: number;
  received: Received[];
}

async function startReplica(): Promise<Replica> {
  const child = spawn(process.execPath, ['-e', REPLICA], { stdio: ['pipe', 'pipe', 'inherit'] });
  stopAtEnd.push(() => child.kill('SIGKILL'));
  const received: Received[] = [];
  let port = 0;
  child.stdout!.setEncoding('utf8');
  child.stdout!.on('data', (text: string) => {
    for (const line of text.split('\n').filter(Boolean)) {
      if (line.startsWith('listening ')) port = Number(line.slice('listening '.length));
      else received.push(JSON.parse(line) as Received);
    }
  });
  await eventually(async () => port > 0, { what: 'a replica listening' });
  return { child, port, received };
}

interface Call {
  method: string;
  route: string;
  headers: Record<string, string>;
  body?: string;
}

/**
 * Two replicas behind Caddy, each with a connection from Caddy kept alive: a call like `call` answered on it (Caddy
 * keeps a pool of connections per proxy of its Caddyfile).
 */
async function keptAliveReplicas(call: Call): Promise<{ replicas: Replica[]; proxyUrl: string }> {
  const replicas = [await startReplica(), await startReplica()];
  const proxyUrl = await startProxy(replicas.map(({ port }) => `127.0.0.1:${port}`));
  // Round robin: two calls reach both.
  for (let i = 0; i < 2; i++) {
    const response = await fetch(`${proxyUrl}${call.route}`, { ...call, headers: { ...call.headers, 'x-warm-up': '1' } });
    expect(await response.text()).toBe(call.method === 'HEAD' ? '' : 'warm');
  }
  return { replicas, proxyUrl };
}

/**
 * Sends a request through Caddy, kills (SIGKILL) the replica it reaches once that replica has read it on a kept-alive
 * connection, and lets the other replica answer whatever reaches it. Returns the answer and what each replica got.
 */
async function killedMidRequest(method: string, route: string, body?: string) {
  const call: Call = { method, route, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body };
  const { replicas, proxyUrl } = await keptAliveReplicas(call);
  const answer = fetch(`${proxyUrl}${route}`, call).then(async (response) => ({
    status: response.status,
    contentType: response.headers.get('content-type'),
    body: await response.text(),
  }));
  const first = await eventually(async () => replicas.find(({ received }) => received.length > 0), { what: `${method} ${route} at a replica` });
  expect(first.received).toEqual([{ method, url: route, body: body ?? '', keptAlive: true }]);
  first.child.kill('SIGKILL');
  const other = replicas.find((replica) => replica !== first)!;
  // Whatever reaches the other replica is answered; a request that reaches none ends without it.
  const onOther = new Promise<void>((resolve) => {
    other.child.stdout!.on('data', () => resolve());
    void answer.finally(resolve);
  });
  await onOther;
  other.child.stdin!.write('answer\n');
  return { answer: await answer, other: other.received };
}

test.each([
  ['GET', '/api/v2.1/crm/donations/?page=1', undefined],
  ['HEAD', '/api/v2.1/crm/donations/', undefined],
  ['POST', '/platform/checkouts', JSON.stringify({ payment: { transaction_id: 'tx-1' } })],
  ['POST', '/platform/shop-orders', JSON.stringify({ payment: { transaction_id: 'tx-2' } })],
  ['POST', '/platform/newsletter-subscriptions/7/confirm', undefined],
])('%s %s cut off by a replica killed on a kept-alive connection is answered by the other replica', async (method, route, body) => {
  const { answer, other } = await killedMidRequest(method, route, body);
  expect(answer.status).toBe(201);
  expect(other).toEqual([expect.objectContaining({ method, url: route, body: body ?? '' })]);
  if (method !== 'HEAD') expect(JSON.parse(answer.body)).toEqual({ body: body ?? '' });
}, 60_000);

test.each([
  ['POST', '/platform/reconciliations', JSON.stringify({ transaction_id: 'tx-1' })],
  ['POST', '/authentication/create', JSON.stringify({ username: 'admin', password: 'wrong' })],
  ['PUT', '/admin/api/webhook-endpoint', JSON.stringify({ active: true })],
])('%s %s, not safe to repeat, is not sent again: a JSON 502 in the service’s error shape', async (method, route, body) => {
  const { answer, other } = await killedMidRequest(method, route, body);
  expect(other).toEqual([]);
  expect(answer).toEqual({
    status: 502,
    contentType: 'application/json; charset=utf-8',
    body: JSON.stringify({ error: 'No API replica answered; try again', code: 'api_unavailable' }),
  });
}, 60_000);
