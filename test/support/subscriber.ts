import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  /** 0-based arrival order. */
  index: number;
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** When it arrived, on the clock given to the subscriber (workflow time in time-skipping tests). */
  atMs: number;
}

export interface Reply {
  status?: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Answer only after this many milliseconds (real time: it plays a slow subscriber). */
  delayMs?: number;
  /** Send the status line and headers at once, and the body only after this many milliseconds. */
  bodyDelayMs?: number;
}

export interface Subscriber {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Resolves once `count` requests have arrived. */
  waitForRequests(count: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export interface SubscriberOptions {
  reply?: (request: ReceivedRequest) => Reply | Promise<Reply>;
  now?: () => number | Promise<number>;
  /** Listen on this port (a subscriber that comes back where it was); default: any free port. */
  port?: number;
}

/** A real HTTP subscriber on loopback, scripted per request, that records what it receives and when. */
export async function startSubscriber(options: SubscriberOptions = {}): Promise<Subscriber> {
  const reply: NonNullable<SubscriberOptions['reply']> = options.reply ?? (() => ({ status: 200, body: 'ok' }));
  const now = options.now ?? (() => Date.now());
  const requests: ReceivedRequest[] = [];
  const waiters: Array<{ count: number; resolve: (requests: ReceivedRequest[]) => void }> = [];
  const timers = new Set<NodeJS.Timeout>();
  const later = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timers.add(timer);
  };

  const server = http.createServer((req, res) => {
    res.on('error', () => undefined);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const request: ReceivedRequest = {
        index: requests.length,
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        atMs: 0,
      };
      requests.push(request);
      request.atMs = await now();
      for (const waiter of waiters.filter((w) => requests.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(requests.slice(0, waiter.count));
      }
      const answer = await reply(request);
      const respond = () => {
        if (answer.bodyDelayMs === undefined) {
          res.writeHead(answer.status ?? 200, answer.headers).end(answer.body ?? '');
          return;
        }
        res.writeHead(answer.status ?? 200, answer.headers);
        res.flushHeaders();
        later(answer.bodyDelayMs, () => res.end(answer.body ?? ''));
      };
      if (answer.delayMs) later(answer.delayMs, respond);
      else respond();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    port,
    requests,
    waitForRequests(count) {
      if (requests.length >= count) return Promise.resolve(requests.slice(0, count));
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
