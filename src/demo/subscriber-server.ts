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
  /** Called once the answer has been written (or the connection is gone). */
  afterAnswer?: () => void;
}

export interface Subscriber {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Resolves once `count` requests have arrived. */
  waitForRequests(count: number): Promise<ReceivedRequest[]>;
  /** Stops listening and cuts open connections: new connections are refused, as by a subscriber that is down. */
  refuseConnections(): Promise<void>;
  /** Listens again on the same port. */
  acceptConnections(): Promise<void>;
  close(): Promise<void>;
}

export interface SubscriberOptions {
  reply?: (request: ReceivedRequest) => Reply | Promise<Reply>;
  now?: () => number | Promise<number>;
  /** Listen on this port (a subscriber that comes back where it was); default: any free port. */
  port?: number;
}

/**
 * A real HTTP subscriber on loopback, scripted per request, that records what it receives and when. The tests
 * script it directly; the demo's test subscriber (test-subscriber.ts) drives it with its modes.
 */
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

  const answerRequest = async (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer) => {
    const request: ReceivedRequest = {
      index: requests.length,
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body,
      atMs: 0,
    };
    requests.push(request);
    request.atMs = await now();
    for (const waiter of waiters.filter((w) => requests.length >= w.count)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(requests.slice(0, waiter.count));
    }
    const answer = await reply(request);
    if (answer.afterAnswer) res.once('close', answer.afterAnswer);
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
  };

  const server = http.createServer((req, res) => {
    res.on('error', () => undefined);
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      answerRequest(req, res, Buffer.concat(chunks)).catch((err: unknown) => {
        // A reply function that throws is a bug in the caller: answer it visibly rather than hang or crash.
        if (!res.headersSent) res.writeHead(500);
        res.end(err instanceof Error ? err.message : String(err));
      });
    });
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
  const stopListening = async () => {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  await listen(options.port ?? 0);
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    port,
    requests,
    waitForRequests(count) {
      if (requests.length >= count) return Promise.resolve(requests.slice(0, count));
      return new Promise((resolve) => waiters.push({ count, resolve }));
    },
    refuseConnections: stopListening,
    acceptConnections: () => listen(port),
    async close() {
      if (server.listening) await stopListening();
    },
  };
}
