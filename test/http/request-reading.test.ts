import net from 'node:net';
import { PLATFORM_DONOR } from '../support/platform-donor';
import { rawExchange } from '../support/raw-http';
import { startTestApp, type TestApp } from '../support/test-app';

/*
 * How a request's bytes are read: a JSON body must be UTF-8, and headers and body must arrive within their time
 * limits (REQUEST_HEADERS_TIMEOUT_SECONDS, REQUEST_BODY_TIMEOUT_SECONDS; one second each here).
 */

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ REQUEST_HEADERS_TIMEOUT_SECONDS: '1', REQUEST_BODY_TIMEOUT_SECONDS: '1' });
});
afterAll(async () => {
  await app?.close();
});

const checkoutBytes = (transactionId: Buffer): Buffer => {
  const [before, after] = JSON.stringify({
    environment: 'TEST',
    currency: 'CHF',
    donor: { ...PLATFORM_DONOR, newsletter: false },
    positions: [{ amount: 50 }],
    payment: { transaction_id: 'TXN', method: 'VIS' },
  }).split('TXN');
  return Buffer.concat([Buffer.from(before), transactionId, Buffer.from(after)]);
};

const rawPost = (path: string, body: Buffer, headers = '') =>
  rawExchange(
    app.baseUrl,
    Buffer.concat([
      Buffer.from(
        `POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: ${app.staff().Authorization}\r\nContent-Type: application/json${headers}\r\n` +
          `Content-Length: ${body.length}\r\nConnection: close\r\n\r\n`,
      ),
      body,
    ]),
  );

const checkouts = async () => Number((await app.db('checkouts').count({ n: '*' }).first())?.n);

describe('a JSON body must be UTF-8', () => {
  test('two checkouts whose transaction ids differ in one invalid byte are both refused, not merged into one payment', async () => {
    const before = await checkouts();
    for (const invalid of [0xff, 0xfe]) {
      const answer = await rawPost('/platform/checkouts', checkoutBytes(Buffer.from([0x74, 0x78, invalid, 0x31])));
      expect([answer.status, JSON.parse(answer.body)]).toEqual([400, { error: 'The body is not valid UTF-8; send JSON encoded as UTF-8', code: 'malformed_body' }]);
    }
    expect(await checkouts()).toBe(before);
  });

  test.each([
    ['a lone continuation byte', [0x80]],
    ['an overlong encoding of /', [0xc0, 0xaf]],
    ['an encoded surrogate', [0xed, 0xa0, 0x80]],
    ['a sequence cut short', [0xe2, 0x82]],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ])('%s is refused', async (_, bytes) => {
    const answer = await rawPost('/platform/checkouts', checkoutBytes(Buffer.from(bytes)));
    expect([answer.status, JSON.parse(answer.body).code]).toEqual([400, 'malformed_body']);
  });

  test('valid UTF-8 is taken as written, U+FFFD itself included; another charset is a 415', async () => {
    const written = Buffer.from('tx-ä-\u{1F600}-\uFFFD', 'utf8');
    const answer = await rawPost('/platform/checkouts', checkoutBytes(written));
    expect(answer.status).toBe(201);
    expect(await app.db('checkouts').where({ transaction_id: 'tx-ä-\u{1F600}-\uFFFD' }).first()).toBeDefined();
    const latin1 = await rawPost('/platform/checkouts', checkoutBytes(Buffer.from('tx-é', 'latin1')), '; charset=iso-8859-1');
    expect([latin1.status, JSON.parse(latin1.body).code]).toEqual([415, 'unsupported_media_type']);
  });

  test('an escaped __proto__ key is the same key, and refused', async () => {
    const answer = await rawPost('/platform/checkouts', Buffer.from('{"\\u005f_proto__":{"polluted":1}}'));
    expect([answer.status, JSON.parse(answer.body).code]).toEqual([400, 'forbidden_key']);
  });
});

/** Opens a connection, writes `head`, and answers what the server says and how long it took to say it. */
function stalled(head: string): Promise<{ status: number; body: string; raw: string; ms: number }> {
  const { port } = new URL(app.baseUrl);
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.write(head));
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      resolve({ status: Number(text.split(' ')[1]), body: text.slice(split + 4), raw: text, ms: Date.now() - started });
    });
  });
}

describe('headers and body must arrive in time', () => {
  const auth = () => `Authorization: ${app.staff().Authorization}\r\n`;

  test('a body announced as 100 bytes of which 2 arrive: 408 in JSON once the body limit has passed, and the connection closes', async () => {
    const answer = await stalled(`POST /platform/checkouts HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{"`);
    expect([answer.status, JSON.parse(answer.body)]).toEqual([408, { error: 'The body did not arrive within 1 s', code: 'request_timeout' }]);
    expect(answer.ms).toBeGreaterThanOrEqual(900);
    expect(answer.ms).toBeLessThan(5_000);
  });

  test.each([
    ['a refusal before the body is read', `POST /platform/checkouts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"`, 401],
    ['a GET that announces a body', 'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"', 200],
  ])('%s: answered once, with Connection: close, never followed by a 408 for the missing rest', async (_, head, status) => {
    const answer = await stalled(head);
    expect(answer.status).toBe(status);
    expect(answer.raw).toMatch(/\r\nConnection: close\r\n/i);
    expect(answer.raw.match(/HTTP\/1\.1 /g)).toHaveLength(1);
    expect(answer.ms).toBeLessThan(1_000 + 2_000);
  });

  test('headers that stop coming: 408 in JSON after the headers limit', async () => {
    const answer = await stalled('GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    expect([answer.status, JSON.parse(answer.body).code]).toEqual([408, 'request_timeout']);
    expect(answer.ms).toBeGreaterThanOrEqual(900);
    expect(answer.ms).toBeLessThan(5_000);
  });

  test('the limits are settings with bounds: at most 60 s for a body', () => {
    expect(app.config.http.timeouts).toEqual({ headersSeconds: 1, bodySeconds: 1 });
  });
});
