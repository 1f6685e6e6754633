import { classifyExchange, RESPONSE_BODY_LIMIT_BYTES, storableResponseBody } from '../../src/webhooks/delivery-outcome';

const response = (status: number, body = '', location?: string) =>
  classifyExchange({ kind: 'response', status, location, body: Buffer.from(body), complete: true });

test('every 2xx is delivered, with its code and body kept', () => {
  for (const status of [200, 201, 202, 204, 299]) {
    expect(response(status, 'ok')).toEqual({ outcome: 'delivered', responseCode: status, responseBody: 'ok', error: null });
  }
});

test('redirects are failures and say where they pointed', () => {
  expect(response(301, '', 'https://elsewhere.example/hook')).toEqual({
    outcome: 'failed',
    responseCode: 301,
    responseBody: '',
    error: 'Redirect not followed (Location: https://elsewhere.example/hook)',
  });
  expect(response(307).error).toBe('Redirect not followed (Location: none)');
});

test('4xx and 5xx are failures; the code and body tell why', () => {
  expect(response(404, 'no such hook')).toEqual({ outcome: 'failed', responseCode: 404, responseBody: 'no such hook', error: null });
  expect(response(503, 'maintenance').outcome).toBe('failed');
});

test('no answer in time, a connection error, or not sending at all are failures without a response', () => {
  expect(classifyExchange({ kind: 'timeout', timeoutMs: 30_000 })).toEqual({
    outcome: 'failed',
    responseCode: null,
    responseBody: null,
    error: 'No response within 30 s',
  });
  expect(classifyExchange({ kind: 'connection-error', message: 'connect ECONNREFUSED 127.0.0.1:9' })).toEqual({
    outcome: 'failed',
    responseCode: null,
    responseBody: null,
    error: 'Connection error: connect ECONNREFUSED 127.0.0.1:9',
  });
  expect(classifyExchange({ kind: 'not-sent', reason: 'the webhook endpoint is switched off' }).error).toBe(
    'Not sent: the webhook endpoint is switched off',
  );
});

describe('stored response bodies', () => {
  test('are cut at 16 KiB', () => {
    expect(RESPONSE_BODY_LIMIT_BYTES).toBe(16 * 1024);
    expect(storableResponseBody(Buffer.alloc(20_000, 'a'))).toHaveLength(16 * 1024);
  });

  test('survive invalid UTF-8 and NUL bytes, which Postgres text cannot hold', () => {
    const bytes = Buffer.concat([Buffer.from('ok '), Buffer.from([0xff, 0xfe, 0x00]), Buffer.from(' Zürich')]);
    expect(storableResponseBody(bytes)).toBe('ok \uFFFD\uFFFD\uFFFD Zürich');
  });

  test('keep multi-byte characters intact below the limit', () => {
    expect(storableResponseBody(Buffer.from('Grüezi 👋'))).toBe('Grüezi 👋');
  });
});
