import net from 'node:net';
import Koa from 'koa';
import { createLogger } from '../../src/logger';
import { serve } from '../../src/runtime/components';
import { Lifecycle } from '../../src/runtime/lifecycle';

/*
 * How an API replica stops behind a proxy (src/http/graceful-close.ts): what the proxy already sent is answered,
 * then the proxy is told to go elsewhere. Over raw kept-alive connections, as Caddy keeps them to each replica.
 */

interface KeptAlive {
  socket: net.Socket;
  /** Writes a GET and resolves with its answer's status line and headers, read from this connection. */
  get(path: string): Promise<{ status: number; headers: Record<string, string> }>;
  /** Resolves when the server has closed the connection. */
  ended: Promise<void>;
}

function keptAlive(port: number): Promise<KeptAlive> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let buffered = '';
    let waiting: ((text: string) => void) | undefined;
    const deliver = () => {
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0 || !waiting) return;
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(buffered.slice(0, end))?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      const answer = buffered.slice(0, end);
      buffered = buffered.slice(end + 4 + length);
      const take = waiting;
      waiting = undefined;
      take(answer);
    };
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      deliver();
    });
    const ended = new Promise<void>((done) => socket.once('close', () => done()));
    socket.on('error', () => undefined);
    socket.once('connect', () =>
      resolve({
        socket,
        ended,
        get: (path) =>
          new Promise((answered, failed) => {
            waiting = (text) => {
              const [statusLine, ...lines] = text.split('\r\n');
              const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
              answered({ status: Number(statusLine.split(' ')[1]), headers });
            };
            socket.once('close', () => failed(new Error(`the server closed the connection without answering GET ${path}`)));
            socket.write(`GET ${path} HTTP/1.1\r\nHost: replica\r\nConnection: keep-alive\r\n\r\n`);
            deliver();
          }),
      }),
    );
    socket.once('error', reject);
  });
}

const refused = (port: number) =>
  new Promise<string>((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve('accepted');
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });

let lifecycle: Lifecycle;
let port: number;
let releaseSlow: () => void;
let slowEntered: Promise<void>;

beforeEach(async () => {
  const app = new Koa();
  let entered: () => void;
  slowEntered = new Promise((resolve) => (entered = resolve));
  const released = new Promise<void>((resolve) => (releaseSlow = resolve));
  app.use(async (ctx) => {
    if (ctx.path === '/slow') {
      entered();
      await released;
    }
    ctx.body = { status: 'ok' };
  });
  lifecycle = new Lifecycle(createLogger('silent'));
  port = await serve(app, { port: 0, host: '127.0.0.1', timeouts: { headersSeconds: 30, bodySeconds: 30 } }, lifecycle);
});

afterEach(async () => {
  releaseSlow();
  await lifecycle.stop();
});

test('a request the proxy wrote on a kept-alive connection as the stop began is answered, with Connection: close', async () => {
  const connection = await keptAlive(port);
  expect((await connection.get('/')).headers.connection).toBe('keep-alive');
  const idle = await keptAlive(port);
  expect((await idle.get('/')).status).toBe(200);

  // The proxy's next request is already on the wire (written, not yet read by the server) when the stop begins.
  const answer = connection.get('/');
  const stopped = lifecycle.stop();

  expect(await answer).toMatchObject({ status: 200, headers: { connection: 'close' } });
  await connection.ended;
  expect(await refused(port)).toBe('ECONNREFUSED');
  // The idle connection is not cut: it serves what still comes, then ends.
  expect(await idle.get('/')).toMatchObject({ status: 200, headers: { connection: 'close' } });
  await idle.ended;
  await stopped;
});

test('a request under way when the stop begins finishes, its connection closes after it, and the stop waits for it', async () => {
  const connection = await keptAlive(port);
  const answer = connection.get('/slow');
  await slowEntered;
  let done = false;
  const stopped = lifecycle.stop().then(() => (done = true));
  expect(await refused(port)).toBe('ECONNREFUSED');
  expect(done).toBe(false);
  releaseSlow();
  expect(await answer).toMatchObject({ status: 200, headers: { connection: 'close' } });
  await connection.ended;
  await stopped;
});

test('a request that asked for 100 Continue is under way like any other: it finishes with Connection: close', async () => {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.write('GET /slow HTTP/1.1\r\nHost: replica\r\nExpect: 100-continue\r\nContent-Length: 0\r\n\r\n');
  await slowEntered;
  const stopped = lifecycle.stop();
  releaseSlow();
  await ended;
  await stopped;
  const [interim, final] = received.split(/\r\n\r\n/);
  expect(interim).toBe('HTTP/1.1 100 Continue');
  expect(final).toMatch(/^HTTP\/1\.1 200 /);
  expect(final).toMatch(/\r\nconnection: close\r\n/i);
});
