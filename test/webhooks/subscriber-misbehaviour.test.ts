import net from 'node:net';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createDeliveryActivities } from '../../activities/delivery-activities';
import type { DeliveryActivities } from '../../src/delivery-rules/activity-contracts';
import type { Db } from '../../src/db/knex';
import { createLogger } from '../../src/logger';
import { createTestDatabase } from '../support/database';
import { attemptRows, eventRow, insertEndpoint, insertEvent, TEST_KEYRING } from '../support/webhook-rows';

/*
 * Whatever a subscriber does on the wire, an attempt ends within the time limit as a recorded result (never a thrown
 * error that would crash or stall the worker), and at most 16 KiB of its answer is ever held in memory. The time
 * limit is scaled from 30 s to 400 ms, as in the other delivery tests.
 */

const TIMEOUT_MS = 400;
const LIMIT = 16 * 1024;
const quiet = new DefaultLogger('ERROR');
const run = <A extends unknown[], R>(fn: (...args: A) => Promise<R>, ...args: A): Promise<R> =>
  new MockActivityEnvironment({ workflowExecution: { workflowId: 'webhook-event-misbehaviour', runId: 'run' } }, { logger: quiet }).run(
    fn,
    ...args,
  ) as Promise<R>;

type Behaviour = (socket: net.Socket) => void;

/** A raw TCP subscriber: it reads the request head and then misbehaves exactly as told, byte by byte if need be. */
interface RawSubscriber {
  url: string;
  behave(behaviour: Behaviour): void;
  /** Resolves when the connection of the current attempt is closed, with the bytes the subscriber managed to write. */
  closed(): Promise<{ written: number }>;
  close(): Promise<void>;
}

async function startRawSubscriber(): Promise<RawSubscriber> {
  let behaviour: Behaviour = () => undefined;
  let onClosed: (info: { written: number }) => void = () => undefined;
  let closedPromise = Promise.resolve({ written: 0 });
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    let head = '';
    let started = false;
    socket.on('error', () => undefined);
    socket.on('close', () => {
      sockets.delete(socket);
      onClosed({ written: socket.bytesWritten });
    });
    socket.on('data', (chunk) => {
      head += chunk.toString('latin1');
      if (!started && head.includes('\r\n\r\n')) {
        started = true;
        behaviour(socket);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    behave(next) {
      behaviour = next;
      closedPromise = new Promise((resolve) => (onClosed = resolve));
    },
    closed: () => closedPromise,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const head = (status: string, headers: string[] = []) => `HTTP/1.1 ${status}\r\n${[...headers, ''].join('\r\n')}\r\n`;
const answer = (status: string, body: string | Buffer, headers: string[] = []) => (socket: net.Socket) => {
  socket.write(head(status, [...headers, `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close']));
  socket.end(body);
};
/** Writes for as long as the other side reads: a body that never ends. */
const endless = (status: string, chunk: Buffer) => (socket: net.Socket) => {
  socket.write(head(status, ['Content-Type: text/plain']));
  const pump = () => {
    while (!socket.destroyed && socket.write(chunk));
    if (!socket.destroyed) socket.once('drain', pump);
  };
  pump();
};
/** Sends the given bytes one every `everyMs`, forever: a slow-loris answer. */
const trickle = (text: string, everyMs: number) => (socket: net.Socket) => {
  let i = 0;
  const timer = setInterval(() => {
    if (socket.destroyed) return clearInterval(timer);
    socket.write(text[i++ % text.length]);
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
};

let db: Db;
let activities: DeliveryActivities;
let subscriber: RawSubscriber;
let endpointId: number;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  activities = createDeliveryActivities({ db, log: createLogger('silent'), http: { timeoutMs: TIMEOUT_MS }, allowPrivateAddresses: true, keyring: TEST_KEYRING });
  subscriber = await startRawSubscriber();
  endpointId = await insertEndpoint(db, { url: subscriber.url, basicAuth: { username: 'crm', password: 'echo-me-not-1' } });
});
afterAll(async () => {
  await subscriber?.close();
  await db?.destroy();
});

/** One attempt against the misbehaving subscriber, recorded; the result with the stored body, the rows, and how long it took. */
async function attemptAgainst(behaviour: Behaviour) {
  subscriber.behave(behaviour);
  const event = await insertEvent(db, endpointId);
  const started = Date.now();
  const report = await run(activities.attemptDelivery, {
    eventId: event.id,
    attemptNumber: 1,
    attempt: { kind: 'scheduled', number: 1 },
    retryDelayMs: 300_000,
  });
  const elapsedMs = Date.now() - started;
  const { written } = await subscriber.closed();
  const status = report.recorded!.status;
  const [attempt] = await attemptRows(db, event.id);
  const row = await eventRow(db, event.id);
  // Recorded as it happened, on the attempt and as the event's last response.
  expect(attempt).toMatchObject({ number: 1, outcome: report.outcome, response_code: report.responseCode, error: report.error });
  expect(row).toMatchObject({ status, attempts: 1, last_response_code: report.responseCode, last_response_body: attempt.response_body, last_error: report.error });
  expect(elapsedMs).toBeLessThan(TIMEOUT_MS + 1_000);
  return { result: { ...report, responseBody: attempt.response_body as string | null }, status, written };
}

describe('status codes', () => {
  test.each([
    ['301 Moved Permanently', ['Location: https://elsewhere.example.org/'], 'Redirect not followed (Location: https://elsewhere.example.org/)'],
    ['303 See Other', [], 'Redirect not followed (Location: none)'],
    ['307 Temporary Redirect', ['Location: /other'], 'Redirect not followed (Location: /other)'],
    ['400 Bad Request', [], null],
    ['404 Not Found', [], null],
    ['429 Too Many Requests', ['Retry-After: 60'], null],
    ['500 Internal Server Error', [], null],
    ['502 Bad Gateway', [], null],
    ['503 Service Unavailable', [], null],
  ])('%s is a failed attempt with its code and body', async (status, headers, error) => {
    const { result, status: eventStatus } = await attemptAgainst(answer(status, `body of ${status}`, headers));
    expect(result).toMatchObject({ outcome: 'failed', responseCode: Number(status.slice(0, 3)), responseBody: `body of ${status}`, error });
    expect(eventStatus).toBe('failed');
  });

  test('any 2xx is delivered, 204 without a body too', async () => {
    for (const status of ['200 OK', '201 Created', '202 Accepted', '204 No Content', '299 Whatever']) {
      const { result } = await attemptAgainst(answer(status, status.startsWith('204') ? '' : 'thanks'));
      expect([status, result.outcome]).toEqual([status, 'delivered']);
    }
  });
});

describe('slow subscribers', () => {
  test('no status line within the limit ("over 30 s") is a failure, and the connection is closed', async () => {
    const { result } = await attemptAgainst(() => undefined);
    expect(result).toMatchObject({ outcome: 'failed', responseCode: null, responseBody: null, error: `No response within ${TIMEOUT_MS / 1000} s` });
  });

  test('a status line trickling in byte by byte (slow loris) is cut at the limit', async () => {
    const { result } = await attemptAgainst(trickle('HTTP/1.1 200 OK\r\nX-Slow: ' + 'a'.repeat(1000), 20));
    expect(result).toMatchObject({ outcome: 'failed', error: `No response within ${TIMEOUT_MS / 1000} s` });
  });

  test('a 2xx whose body trickles on past the limit counts as delivered, with what arrived', async () => {
    const { result } = await attemptAgainst((socket) => {
      socket.write(head('200 OK', ['Content-Length: 100000']));
      trickle('ok', 20)(socket);
    });
    expect(result.outcome).toBe('delivered');
    expect(result.responseBody).toMatch(/^(ok)+o?$/);
  });
});

describe('broken connections', () => {
  test('a reset before any answer is a connection error', async () => {
    const { result } = await attemptAgainst((socket) => socket.resetAndDestroy());
    expect(result).toMatchObject({ outcome: 'failed', responseCode: null, error: 'Connection error: read ECONNRESET' });
  });

  test('a connection closed without an answer is a connection error', async () => {
    const { result } = await attemptAgainst((socket) => socket.end());
    expect(result).toMatchObject({ outcome: 'failed', responseCode: null, error: 'Connection error: socket hang up' });
  });

  test('a 500 reset in the middle of its body keeps the code and what arrived', async () => {
    const { result } = await attemptAgainst((socket) => {
      socket.write(head('500 Internal Server Error', ['Content-Length: 1000']));
      socket.write('half of it', () => setTimeout(() => socket.resetAndDestroy(), 20));
    });
    expect(result).toMatchObject({ outcome: 'failed', responseCode: 500, responseBody: 'half of it' });
  });

  test('garbage instead of HTTP is a connection error', async () => {
    const { result } = await attemptAgainst((socket) => socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n'));
    expect(result.outcome).toBe('failed');
    expect(result.error).toMatch(/^Connection error: Parse Error/);
  });

  test('headers larger than Node accepts are a connection error, not unbounded memory', async () => {
    const { result } = await attemptAgainst((socket) => socket.end(head('200 OK', [`X-Huge: ${'h'.repeat(64 * 1024)}`])));
    expect(result.outcome).toBe('failed');
    expect(result.error).toMatch(/^Connection error: Parse Error: Header overflow/);
  });
});

describe('huge and endless bodies', () => {
  test.each([
    ['200 OK', 'delivered'],
    ['500 Internal Server Error', 'failed'],
  ])('an endless %s body: reading stops at 16 KiB and the connection is closed at once', async (status, outcome) => {
    const { result, written } = await attemptAgainst(endless(status, Buffer.alloc(64 * 1024, 'z')));
    expect(result.outcome).toBe(outcome);
    expect(result.responseBody).toBe('z'.repeat(LIMIT));
    // The subscriber could write only what fits in the socket buffers before we hung up: nothing like the
    // hundreds of megabytes it would have sent in the time limit.
    expect(written).toBeLessThan(16 * 1024 * 1024);
    expect(result.durationMs).toBeLessThan(TIMEOUT_MS);
  });

  test('a body announced as 1 GiB is cut at 16 KiB too', async () => {
    const { result } = await attemptAgainst((socket) => {
      socket.write(head('404 Not Found', [`Content-Length: ${1024 ** 3}`]));
      endless('', Buffer.alloc(LIMIT, 'y'))(socket);
    });
    expect(result).toMatchObject({ outcome: 'failed', responseCode: 404 });
    expect(Buffer.byteLength(result.responseBody!)).toBeLessThanOrEqual(LIMIT + 3);
  });

  test('invalid UTF-8, NUL bytes and a character cut at the 16 KiB boundary are stored readably', async () => {
    const body = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00, 0xc3]), Buffer.alloc(LIMIT - 5, 'a'), Buffer.from('€uro')]);
    const { result } = await attemptAgainst(answer('200 OK', body));
    expect(result.outcome).toBe('delivered');
    expect(result.responseBody!.startsWith('\uFFFD\uFFFD\uFFFD\uFFFDa')).toBe(true);
    expect(result.responseBody!.endsWith('a\uFFFD')).toBe(true);
  });
});

test('a subscriber that echoes our request back never gets the basic-auth password into the stored answer', async () => {
  const echo = (socket: net.Socket) => {
    let received = '';
    socket.on('data', (chunk) => (received += chunk.toString('latin1')));
    setTimeout(() => answer('400 Bad Request', `you sent: Authorization: Basic ${Buffer.from('crm:echo-me-not-1').toString('base64')} (password echo-me-not-1)`)(socket), 10);
    return received;
  };
  const { result } = await attemptAgainst(echo);
  expect(result.responseBody).toBe('you sent: Authorization: Basic [redacted] (password [redacted])');
});
