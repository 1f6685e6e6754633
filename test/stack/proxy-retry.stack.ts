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

// Compose's Caddyfile in front of two API replicas of which one refuses connections, as one does while it restarts:
// every POST reaches the other replica, body and all. Caddy retries a refused request on another replica, which
// needs the body again (request_buffers); without it the retried POST fails with a 502 and both replicas are left
// out for fail_duration. Needs the Caddy that `npm run stack` builds into .tools/.

const caddy = caddyTools(imageVersion(composeAsWritten().services.proxy)).caddy;
let dir: string;
let proxy: ChildProcess;
let replica: http.Server;
const received: string[] = [];
let proxyUrl: string;

beforeAll(async () => {
  if (!existsSync(caddy)) throw new Error(`not built yet: ${caddy}; \`npm run stack\` builds it once`);
  dir = await mkdtemp(path.join(os.tmpdir(), 'proxy-retry-'));
  replica = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(201, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => replica.listen(0, '127.0.0.1', resolve));
  const [listen, refusing] = [await freePort(), await freePort()];
  const live = (replica.address() as { port: number }).port;
  const caddyfile = path.join(dir, 'Caddyfile');
  const composeCaddyfile = readFileSync(path.join(projectRoot, 'deploy/caddy/Caddyfile'), 'utf8');
  // The refusing replica first: round robin offers it the first request.
  await writeFile(caddyfile, localCaddyfile(composeCaddyfile, listen, [`127.0.0.1:${refusing}`, `127.0.0.1:${live}`]));
  proxy = spawn(caddy, ['run', '--adapter', 'caddyfile', '--config', caddyfile], {
    env: { HOME: dir, XDG_DATA_HOME: dir, XDG_CONFIG_HOME: dir },
    stdio: 'ignore',
  });
  proxyUrl = `http://127.0.0.1:${listen}`;
  await eventually(async () => (await fetch(`${proxyUrl}/healthz`).catch(() => undefined))?.status === 201, { what: 'Caddy' });
  received.length = 0;
}, 60_000);

afterAll(async () => {
  proxy?.kill('SIGTERM');
  await new Promise<void>((resolve) => (replica ? replica.close(() => resolve()) : resolve()));
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('POSTs that Caddy offers to a replica refusing connections reach the other replica with their bodies', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) {
    const response = await fetch(`${proxyUrl}/platform/checkouts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ call: i }),
    });
    statuses.push(response.status);
  }
  expect(statuses).toEqual([201, 201, 201, 201, 201, 201]);
  expect(received).toEqual(Array.from({ length: 6 }, (_, i) => JSON.stringify({ call: i })));
}, 60_000);
