import net from 'node:net';
import { clientErrorAnswer } from '../../src/http/client-errors';
import { ERROR_CODES } from '../../src/shared/errors';
import { rawExchange, type RawAnswer } from '../support/raw-http';
import { startTestApp, type TestApp } from '../support/test-app';

/*
 * What Node's HTTP parser refuses never reaches the app; the server's clientError handler answers it with the same
 * JSON error shape as every other refusal (docs/api.md#every-operation-read-api-tokens-platform-admin-probes).
 */

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app.close();
});

function expectJsonRefusal(answer: RawAnswer, status: number, code: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers).toMatchObject({
    'content-type': 'application/json; charset=utf-8',
    connection: 'close',
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  });
  expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.body));
  expect(JSON.parse(answer.body)).toEqual({ error: expect.any(String), code });
  expect(Object.keys(ERROR_CODES)).toContain(code);
}

describe('requests Node’s parser refuses get a JSON error and a closed connection', () => {
  test.each([
    ['an unknown method', 'FOO /admin/api/info HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a lower-case method', 'get /admin/api/info HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a target starting with a backslash', 'GET \\admin/api/info HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a target starting with %c0%af', 'GET %c0%afadmin/api/info HTTP/1.1\r\nHost: x\r\n\r\n'],
    ['a header without a colon', 'GET /healthz HTTP/1.1\r\nHost: x\r\nbroken header\r\n\r\n'],
    ['an unknown HTTP version', 'GET /healthz HTTP/9.1\r\nHost: x\r\n\r\n'],
    ['Content-Length and Transfer-Encoding together', 'POST /platform/checkouts HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'],
    ['two different Content-Length values', 'POST /platform/checkouts HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n{}'],
    ['Transfer-Encoding: xchunked', 'POST /platform/checkouts HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: xchunked\r\n\r\n0\r\n\r\n'],
  ])('%s: 400 bad_request', async (_, request) => {
    expectJsonRefusal(await rawExchange(app.baseUrl, request), 400, 'bad_request');
  });

  test('a request line and headers over the limit: 431 headers_too_large', async () => {
    expectJsonRefusal(await rawExchange(app.baseUrl, `GET /admin/api/info${'x'.repeat(70_000)} HTTP/1.1\r\nHost: x\r\n\r\n`), 431, 'headers_too_large');
    const manyHeaders = Array.from({ length: 400 }, (_, i) => `X-Filler-${i}: ${'y'.repeat(60)}\r\n`).join('');
    expectJsonRefusal(await rawExchange(app.baseUrl, `GET /healthz HTTP/1.1\r\nHost: x\r\n${manyHeaders}\r\n`), 431, 'headers_too_large');
  });

  test('a request smuggled behind conflicting lengths is never answered', async () => {
    const smuggled = 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n';
    const answer = await rawExchange(
      app.baseUrl,
      `POST /platform/checkouts HTTP/1.1\r\nHost: x\r\nContent-Length: ${4 + smuggled.length}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n${smuggled}`,
    );
    expectJsonRefusal(answer, 400, 'bad_request');
    expect(answer.raw.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  });

  test('a body that fails to parse while the app is reading it is answered at once, not left waiting', async () => {
    const auth = app.staff().Authorization;
    const answer = await rawExchange(
      app.baseUrl,
      `POST /platform/checkouts HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`,
    );
    expectJsonRefusal(answer, 400, 'bad_request');
    expect(Number((await app.db('checkouts').count({ n: '*' }).first())?.n)).toBe(0);
  });

});

describe('what Node would answer by itself gets the same JSON error and a closed connection', () => {
  test.each([
    // Node closes a CONNECT without an answer.
    ['CONNECT to a host and port', 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', 501, 'not_implemented'],
    ['CONNECT to a path of ours', 'CONNECT /admin/api/info HTTP/1.1\r\nHost: x\r\n\r\n', 501, 'not_implemented'],
    ['CONNECT with bytes for the tunnel behind it', 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n\r\nSSH-2.0-x\r\n', 501, 'not_implemented'],
    // Node answers an Expect other than 100-continue with a bare 417; the body is not read.
    ['Expect: foo', 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: foo\r\n\r\n', 417, 'expectation_failed'],
    ['a POST with its body and an Expect', 'POST /platform/checkouts HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}', 417, 'expectation_failed'],
    ['an empty Expect', 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect:\r\n\r\n', 417, 'expectation_failed'],
    // Node answers an HTTP/1.1 request without Host with a bare 400.
    ['an HTTP/1.1 request without Host', 'GET /healthz HTTP/1.1\r\n\r\n', 400, 'bad_request'],
    // Node takes these: the first of several Host fields, any Expect list naming 100-continue (after an interim 100).
    ['two Host fields', 'GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n', 400, 'bad_request'],
    ['two equal Host fields', 'GET /healthz HTTP/1.1\r\nHost: x\r\nhost: x\r\n\r\n', 400, 'bad_request'],
    ['two Host fields on HTTP/1.0', 'GET /healthz HTTP/1.0\r\nHost: x\r\nHost: y\r\n\r\n', 400, 'bad_request'],
    // Node keeps the first Authorization and drops the rest; a proxy in front may have judged the request by another.
    ['two Authorization fields', 'GET /api/v2.1/crm/contacts/ HTTP/1.1\r\nHost: x\r\nAuthorization: Basic eDp5\r\nAuthorization: Bearer z\r\n\r\n', 400, 'bad_request'],
    // Node reads these as chunked and drops the codings before it; a proxy in front would read the body otherwise.
    ['Transfer-Encoding: identity, chunked', 'POST /platform/checkouts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: identity, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n', 501, 'not_implemented'],
    ['Transfer-Encoding: gzip, chunked', 'POST /platform/checkouts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n', 501, 'not_implemented'],
    ['two equal Authorization fields', 'GET /healthz HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer z\r\nauthorization: Bearer z\r\n\r\n', 400, 'bad_request'],
    ['Expect: 100-continue, foo', 'POST /platform/checkouts HTTP/1.1\r\nHost: x\r\nExpect: 100-continue, foo\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}', 417, 'expectation_failed'],
    ['Expect: foo, 100-continue', 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: foo, 100-continue\r\n\r\n', 417, 'expectation_failed'],
    ['two Expect fields', 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nExpect: 100-continue\r\n\r\n', 417, 'expectation_failed'],
    ['Expect: 100-continuex', 'GET /healthz HTTP/1.1\r\nHost: x\r\nExpect: 100-continuex\r\n\r\n', 417, 'expectation_failed'],
    // The parser refuses the preface of a client that assumes HTTP/2.
    ['the HTTP/2 preface', 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 400, 'bad_request'],
  ])('%s: %i %s', async (_, request, status, code) => {
    expectJsonRefusal(await rawExchange(app.baseUrl, request), status, code);
    expect(Number((await app.db('checkouts').count({ n: '*' }).first())?.n)).toBe(0);
  });

  test('the refusal of a request without Host names the header', async () => {
    expect(JSON.parse((await rawExchange(app.baseUrl, 'GET /healthz HTTP/1.1\r\n\r\n')).body).error).toMatch(/Host header/);
  });

  test('an Expect list with 100-continue in it is refused before the interim 100, so no body is invited', async () => {
    const answer = await rawExchange(app.baseUrl, 'POST /platform/checkouts HTTP/1.1\r\nHost: x\r\nExpect: 100-continue, foo\r\nContent-Length: 2\r\n\r\n');
    expect(answer.raw).not.toMatch(/100 Continue/);
    expect(JSON.parse((await rawExchange(app.baseUrl, 'GET /healthz HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n')).body).error).toMatch(/one Host/);
  });
});

describe('a refusal on a connection another request shares, or a client resets', () => {
  test.each([
    ['a request the parser refuses', 'FOO /healthz HTTP/1.1\r\nHost: x\r\n\r\n', 'HTTP/1.1 400', 'bad_request'],
    ['a CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n', 'HTTP/1.1 501', 'not_implemented'],
  ])('%s pipelined behind a normal one gets its own JSON answer after that one’s, not in its place', async (_, refused, statusLine, code) => {
    const answer = await rawExchange(app.baseUrl, `GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n${refused}`);
    const answers = answer.raw.split(/(?=HTTP\/1\.1 \d{3} )/);
    expect(answers.map((text) => text.slice(0, 12))).toEqual(['HTTP/1.1 200', statusLine]);
    expect(answers[1]).toMatch(new RegExp(`\\r\\n\\r\\n\\{"error":"[^"]+","code":"${code}"\\}$`));
  });

  test.each([
    ['a bad request', `FOO / HTTP/1.1\r\nHost: x\r\n${'X-Filler: z\r\n'.repeat(50)}\r\n`],
    ['a CONNECT', 'CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n'],
  ])('clients that reset right after %s cost nothing: the server goes on answering', async (_, request) => {
    const { port } = new URL(app.baseUrl);
    await Promise.all(
      Array.from({ length: 20 }, () =>
        new Promise<void>((resolve) => {
          const socket = net.connect(Number(port), '127.0.0.1', () => {
            socket.write(request);
            socket.resetAndDestroy();
          });
          socket.on('close', () => resolve());
          socket.on('error', () => undefined);
        }),
      ),
    );
    expect((await app.anonymous.get('/healthz')).status).toBe(200);
  });
});

describe('what Node hands to the app is answered by the app', () => {
  const statusLines = (raw: string) => raw.split('\r\n').filter((line) => line.startsWith('HTTP/1.1 '));

  test.each([
    ['Upgrade: websocket', 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, close\r\nUpgrade: websocket\r\n\r\n'],
    ['Upgrade: h2c', 'GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings, close\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQAAP__\r\n\r\n'],
    ['HTTP/1.0 without Host', 'GET /healthz HTTP/1.0\r\n\r\n'],
    ['HTTP/1.0 with an expectation, which HTTP/1.0 has not', 'GET /healthz HTTP/1.0\r\nExpect: foo\r\n\r\n'],
  ])('%s: the app’s answer', async (_, request) => {
    const answer = await rawExchange(app.baseUrl, request);
    expect(statusLines(answer.raw)).toEqual(['HTTP/1.1 200 OK']);
  });

  test('Expect: 100-continue: Node’s interim 100, then the app’s answer', async () => {
    const answer = await rawExchange(
      app.baseUrl,
      'POST /platform/checkouts HTTP/1.1\r\nHost: x\r\nConnection: close\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}',
    );
    expect(statusLines(answer.raw)).toEqual(['HTTP/1.1 100 Continue', 'HTTP/1.1 401 Unauthorized']);
  });

  test.each(['100-Continue', '100-CONTINUE'])('Expect: %s (the token is case-insensitive) as 100-continue', async (expectation) => {
    const answer = await rawExchange(
      app.baseUrl,
      `POST /platform/checkouts HTTP/1.1\r\nHost: x\r\nConnection: close\r\nExpect: ${expectation}\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}`,
    );
    expect(statusLines(answer.raw)).toEqual(['HTTP/1.1 100 Continue', 'HTTP/1.1 401 Unauthorized']);
  });
});

test('each refusal of Node’s maps to a code of the one list, with its status', () => {
  const statusOf = (code?: string) => Number(clientErrorAnswer(Object.assign(new Error('x'), { code })).split(' ')[1]);
  expect(statusOf('HPE_HEADER_OVERFLOW')).toBe(431);
  expect(statusOf('HPE_CHUNK_EXTENSIONS_OVERFLOW')).toBe(413);
  expect(statusOf('ERR_HTTP_REQUEST_TIMEOUT')).toBe(408);
  expect(statusOf('HPE_INVALID_METHOD')).toBe(400);
  expect(statusOf(undefined)).toBe(400);
  const timeout = clientErrorAnswer(Object.assign(new Error('x'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }));
  expect(JSON.parse(timeout.slice(timeout.indexOf('\r\n\r\n') + 4))).toEqual({ error: expect.any(String), code: 'request_timeout' });
});
