import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { postRequest, type PostOptions } from '../../activities/http-post';
import { SubscriberConnections } from '../../activities/subscriber-connections';

/** A subscriber on all loopback addresses that counts its connections and notes on which address each arrived. */
class CountingSubscriber {
  readonly connections: string[] = [];
  requests = 0;
  private readonly server: http.Server;

  constructor(body = 'ok') {
    this.server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        this.requests += 1;
        res.end(body);
      });
    });
    this.server.on('connection', (socket) => this.connections.push(socket.localAddress ?? ''));
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '0.0.0.0', resolve));
    return (this.server.address() as AddressInfo).port;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const table =
  (addresses: Record<string, string>) =>
  async (hostname: string): Promise<LookupAddress[]> => {
    const address = addresses[hostname];
    if (!address) throw Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' });
    return [{ address, family: 4 }];
  };

const options = (overrides: Partial<PostOptions> = {}): PostOptions => ({
  timeoutMs: 5_000,
  maxBodyBytes: 1_024,
  addresses: { resolve: table({ 'hooks.example.org': '127.0.0.1' }), allowPrivateAddresses: true },
  ...overrides,
});

const post = (url: string, postOptions: PostOptions) => postRequest(url, { 'content-type': 'application/json' }, Buffer.from('{}'), postOptions);

describe('kept-alive connections to a subscriber', () => {
  let subscriber: CountingSubscriber;
  let url: string;

  beforeEach(async () => {
    subscriber = new CountingSubscriber();
    url = `http://hooks.example.org:${await subscriber.listen()}/webhooks`;
  });

  afterEach(() => subscriber.close());

  test('attempts one after the other share one connection', async () => {
    const connections = new SubscriberConnections();
    for (let i = 0; i < 3; i += 1) {
      expect(await post(url, options({ connections }))).toMatchObject({ kind: 'response', status: 200 });
    }
    expect(subscriber.requests).toBe(3);
    expect(subscriber.connections).toHaveLength(1);
  });

  test('without a pool every attempt opens its own connection', async () => {
    await post(url, options());
    await post(url, options());
    expect(subscriber.connections).toHaveLength(2);
  });

  test('an address no longer allowed is refused although a connection to it is open', async () => {
    const connections = new SubscriberConnections();
    expect(await post(url, options({ connections }))).toMatchObject({ kind: 'response', status: 200 });
    const refused = await post(url, options({ connections, addresses: { resolve: table({ 'hooks.example.org': '127.0.0.1' }), allowPrivateAddresses: false } }));
    expect(refused).toEqual({ kind: 'not-sent', reason: 'hooks.example.org resolves to 127.0.0.1, which is not a public (global unicast) address' });
    expect(subscriber.requests).toBe(1);
  });

  test('a name that moved to another address gets a connection to the new address, never the old one', async () => {
    const connections = new SubscriberConnections();
    await post(url, options({ connections }));
    const moved = options({ connections, addresses: { resolve: table({ 'hooks.example.org': '127.0.0.2' }), allowPrivateAddresses: true } });
    expect(await post(url, moved)).toMatchObject({ kind: 'response', status: 200 });
    expect(await post(url, moved)).toMatchObject({ kind: 'response', status: 200 });
    expect(subscriber.connections).toEqual(['127.0.0.1', '127.0.0.2']);
  });

  test('a body cut at the size limit closes its connection; the next attempt opens a new one', async () => {
    await subscriber.close();
    subscriber = new CountingSubscriber('x'.repeat(10_000));
    url = `http://hooks.example.org:${await subscriber.listen()}/webhooks`;
    const connections = new SubscriberConnections();
    const first = await post(url, options({ connections }));
    expect(first).toMatchObject({ kind: 'response', status: 200 });
    expect(first.kind === 'response' && first.body.length).toBe(1_024);
    expect(await post(url, options({ connections }))).toMatchObject({ kind: 'response', status: 200 });
    expect(subscriber.connections).toHaveLength(2);
  });
});

describe('a subscriber that drops idle connections without saying so', () => {
  let server: net.Server;
  let url: string;
  const answered: number[] = [];

  beforeAll(async () => {
    // Answers the first request of every connection and keeps it open; a second request on it is met with a reset,
    // as a subscriber does that closed the connection the moment it was reused.
    let connectionNumber = 0;
    server = net.createServer((socket) => {
      const number = (connectionNumber += 1);
      let requestsOnIt = 0;
      socket.on('data', () => {
        requestsOnIt += 1;
        if (requestsOnIt > 1) {
          socket.resetAndDestroy();
          return;
        }
        answered.push(number);
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: keep-alive\r\n\r\nok');
      });
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://hooks.example.org:${(server.address() as AddressInfo).port}/webhooks`;
  });

  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  beforeEach(() => {
    answered.length = 0;
  });

  test('the attempt is sent once more on a new connection and succeeds', async () => {
    const connections = new SubscriberConnections();
    expect(await post(url, options({ connections }))).toMatchObject({ kind: 'response', status: 200 });
    expect(await post(url, options({ connections }))).toMatchObject({ kind: 'response', status: 200 });
    expect(answered).toHaveLength(2);
    expect(new Set(answered).size).toBe(2);
  });

  test('the second try takes a connection of its own, not another pooled one that is just as stale', async () => {
    const connections = new SubscriberConnections();
    // Two attempts at once leave two idle connections in the pool, both dropped by the subscriber.
    await Promise.all([post(url, options({ connections })), post(url, options({ connections }))]);
    expect(await post(url, options({ connections }))).toMatchObject({ kind: 'response', status: 200 });
    expect(answered).toHaveLength(3);
    expect(new Set(answered).size).toBe(3);
  });
});

test('an attempt that runs into the deadline on a reused connection is not sent again afterwards', async () => {
  // Answers the first request of each connection; later ones on it never.
  let requests = 0;
  let connectionsOpened = 0;
  const server = http.createServer((req, res) => {
    requests += 1;
    req.resume();
    const socket = req.socket as net.Socket & { requestsOnIt?: number };
    socket.requestsOnIt = (socket.requestsOnIt ?? 0) + 1;
    if (socket.requestsOnIt === 1) req.on('end', () => res.end('ok'));
  });
  server.on('connection', () => (connectionsOpened += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://hooks.example.org:${(server.address() as AddressInfo).port}/webhooks`;
  try {
    const connections = new SubscriberConnections();
    expect(await post(url, options({ connections }))).toMatchObject({ kind: 'response', status: 200 });
    expect(await post(url, options({ connections, timeoutMs: 300 }))).toEqual({ kind: 'timeout', timeoutMs: 300 });
    // A request sent again after the deadline would reach the subscriber before this one, on a connection of its own.
    expect(await post(url, options())).toMatchObject({ kind: 'response', status: 200 });
    expect({ requests, connectionsOpened }).toEqual({ requests: 3, connectionsOpened: 2 });
  } finally {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
