import { request as httpRequest } from 'node:http';
import { isCrossOrigin } from '../../src/http/same-origin';
import { declaredRoutes } from '../support/app-router';
import { basicAuth, startTestApp, STAFF, type TestApp } from '../support/test-app';

/*
 * Cross-site request forgery (issue 20, low 4). A page of another origin can make a browser POST a form,
 * `text/plain` or multipart body to this service without asking it first, and the browser adds the Basic credentials
 * it holds for this origin. So: no state-changing operation takes such a body (415), every state-changing request a
 * browser marks as coming from another origin is refused before its guard (403), and no 401 offers Basic, so no
 * browser ever prompts for it and keeps what was typed.
 */

let app: TestApp;
let port: string;
let host: string;

beforeAll(async () => {
  // Wrong passwords are sent to every route below: the failed-login limits are not what this file tests.
  app = await startTestApp({
    LOGIN_MAX_FAILURES_PER_CLIENT_AND_USERNAME: '100000',
    LOGIN_FREE_FAILURES_PER_USERNAME: '100000',
    LOGIN_MAX_FAILURES_PER_CLIENT: '100000',
  });
  host = new URL(app.baseUrl).host;
  port = new URL(app.baseUrl).port;
});
afterAll(async () => {
  await app?.close();
});

/** The routes that change something: every declared operation whose method is not GET. */
const stateChanging = () => declaredRoutes(app.koa).filter(({ method }) => method !== 'GET' && method !== 'OPTIONS');
const concrete = (path: string) => path.replace(/:[A-Za-z0-9_]+/g, '1');

/** A raw request: headers go out exactly as given (fetch would set Origin and Sec-Fetch-* itself, or refuse them). */
function send(
  method: string,
  path: string,
  headers: Record<string, string | string[]>,
  body?: string,
): Promise<{ status: number; code?: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${app.baseUrl}${path}`, { method, headers }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode!, code: text ? JSON.parse(text).code : undefined, headers: response.headers }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

const staff = () => ({ Authorization: basicAuth(STAFF.username, STAFF.password) });

describe('state-changing operations without a body take none, or JSON', () => {
  const BODIES: Record<string, { headers: Record<string, string>; body: string }> = {
    'text/plain': { headers: { 'Content-Type': 'text/plain;charset=UTF-8' }, body: '{"a":1}' },
    form: { headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'a=1' },
    multipart: { headers: { 'Content-Type': 'multipart/form-data; boundary=x' }, body: '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--\r\n' },
    'no content type': { headers: {}, body: 'a=1' },
    'JSON spelled as text': { headers: { 'Content-Type': 'text/json' }, body: '{}' },
  };

  test('a form, text/plain, multipart or untyped body is a 415 on each of them', async () => {
    const bodiless = stateChanging().filter(({ operation }) => operation.body === undefined);
    expect(bodiless.map(({ path }) => path)).toEqual(
      expect.arrayContaining(['/admin/api/webhook-events/:id/resend', '/platform/newsletter-subscriptions/:id/confirm']),
    );
    const answers: string[] = [];
    for (const { method, path } of bodiless) {
      for (const [kind, { headers, body }] of Object.entries(BODIES)) {
        const { status, code } = await send(method, concrete(path), { ...staff(), ...headers }, body);
        answers.push(`${method} ${path} with ${kind}: ${status} ${code}`);
      }
    }
    expect(answers.filter((answer) => !answer.endsWith('415 unsupported_media_type'))).toEqual([]);
  });

  test('no body, an empty one or a JSON one reaches the operation', async () => {
    const confirm = '/platform/newsletter-subscriptions/999/confirm';
    for (const [headers, body] of [
      [{}, undefined],
      [{ 'Content-Type': 'text/plain', 'Content-Length': '0' }, ''],
      [{ 'Content-Type': 'application/json' }, '{}'],
    ] as const) {
      expect(await send('POST', confirm, { ...staff(), ...headers }, body)).toMatchObject({ status: 404, code: 'subscription_not_found' });
    }
  });

  test('without credentials it is still a 401 first', async () => {
    const { status } = await send('POST', '/admin/api/webhook-events/1/resend', { 'Content-Type': 'text/plain' }, 'x');
    expect(status).toBe(401);
  });
});

describe('state-changing requests from pages of other origins', () => {
  const foreignOrigins = () => [
    'https://evil.example',
    'null',
    `http://127.0.0.1.evil.example:${port}`,
    `http://evil.example:${port}`,
    `http://127.0.0.1:${Number(port) + 1}`,
    `http://localhost:${port}`,
    // Not a serialized origin: userinfo, a path, a default port, upper case, a trailing dot, two of them in one.
    `http://evil.example@${host}`,
    `http://${host}/`,
    'http://127.0.0.1:80',
    `HTTP://${host}`,
    `http://127.0.0.1.:${port}`,
    `http://${host}, https://evil.example`,
    `https://evil.example, http://${host}`,
    'file://',
    `ws://${host}`,
    '*',
  ];

  test('are refused with 403 before their guard, on every state-changing operation, whatever the credentials', async () => {
    const answers: string[] = [];
    for (const { method, path } of stateChanging()) {
      for (const origin of ['https://evil.example', 'null']) {
        const { status, code } = await send(method, concrete(path), { ...staff(), Origin: origin, 'Content-Type': 'application/json' }, '{}');
        answers.push(`${method} ${path} from ${origin}: ${status} ${code}`);
      }
    }
    expect(answers.length).toBeGreaterThan(20);
    expect(answers.filter((answer) => !answer.endsWith('403 cross_origin_request'))).toEqual([]);
  });

  test('every spelling of a foreign Origin, and Sec-Fetch-Site other than same-origin or none, is refused', async () => {
    const resend = '/admin/api/webhook-events/999/resend';
    const refused: Array<Record<string, string | string[]>> = [
      ...foreignOrigins().map((origin) => ({ Origin: origin })),
      { Origin: ['https://evil.example', `http://${host}`] },
      { Origin: [`http://${host}`, 'https://evil.example'] },
      { 'Sec-Fetch-Site': 'cross-site' },
      { 'Sec-Fetch-Site': 'same-site' },
      { 'Sec-Fetch-Site': 'Same-Origin' },
      { 'Sec-Fetch-Site': 'same-origin, cross-site' },
      { 'Sec-Fetch-Site': 'cross-site', Origin: `http://${host}` },
      { 'sec-fetch-site': 'cross-site' },
      { ORIGIN: 'https://evil.example' },
    ];
    for (const headers of refused) {
      expect([headers, (await send('POST', resend, { ...staff(), ...headers })).code]).toEqual([headers, 'cross_origin_request']);
    }
  });

  test('its own pages, a user-initiated request, and clients that are not browsers pass', async () => {
    const resend = '/admin/api/webhook-events/999/resend';
    const passed: Array<Record<string, string>> = [
      {},
      { Origin: `http://${host}` },
      { Origin: `https://${host}` }, // the scheme is not compared: a TLS proxy not declared in TRUST_PROXY hides it
      { Origin: `http://localhost:${port}`, Host: `LOCALHOST:${port}` },
      { 'Sec-Fetch-Site': 'same-origin', Origin: `http://${host}` },
      { 'Sec-Fetch-Site': 'none' },
      // Sec-Fetch-Site is the browser's own word; a proxy in front may have rewritten Host.
      { 'Sec-Fetch-Site': 'same-origin', Origin: 'https://api.example.org', Host: 'internal:3000' },
    ];
    for (const headers of passed) {
      expect([headers, (await send('POST', resend, { ...staff(), ...headers })).code]).toEqual([headers, 'webhook_event_not_found']);
    }
    // Reads are never refused: a page may not read the answer anyway (no CORS on staff routes).
    expect((await send('GET', '/admin/api/webhook-events/999', { ...staff(), Origin: 'https://evil.example', 'Sec-Fetch-Site': 'cross-site' })).code).toBe(
      'webhook_event_not_found',
    );
  });

  test('30 parallel forged requests with a wrong password: all refused before any password check', async () => {
    await app.db('login_failures').delete();
    const forged = await Promise.all(
      Array.from({ length: 30 }, () =>
        send('POST', '/admin/api/webhook-events/1/resend', { Authorization: basicAuth(STAFF.username, 'guess'), Origin: 'https://evil.example' }),
      ),
    );
    expect(new Set(forged.map(({ status }) => status))).toEqual(new Set([403]));
    expect(await app.db('login_failures').select('key')).toEqual([]);
  });

  test('a forged X-Forwarded-Host does not make a foreign Origin the addressed host', async () => {
    const headers = { ...staff(), Origin: 'https://evil.example', 'X-Forwarded-Host': 'evil.example' };
    expect((await send('POST', '/admin/api/webhook-events/999/resend', headers)).code).toBe('cross_origin_request');
  });
});

describe('behind a trusted proxy', () => {
  let proxied: TestApp;
  beforeAll(async () => {
    proxied = await startTestApp({ TRUST_PROXY: '127.0.0.1' });
  });
  afterAll(async () => {
    await proxied?.close();
  });

  test('the Origin is compared with the host the proxy says the browser addressed', async () => {
    const post = (headers: Record<string, string>) =>
      fetch(`${proxied.baseUrl}/admin/api/webhook-events/999/resend`, { method: 'POST', headers: { ...staff(), ...headers } }).then(
        async (response) => ((await response.json()) as { code: string }).code,
      );
    const forwarded = { 'X-Forwarded-Host': 'donations.example.org', 'X-Forwarded-Proto': 'https', 'X-Forwarded-For': '198.51.100.7' };
    expect(await post({ ...forwarded, Origin: 'https://donations.example.org' })).toBe('webhook_event_not_found');
    expect(await post({ ...forwarded, Origin: `http://${host}` })).toBe('cross_origin_request');
  });

  test('a peer that is not the proxy cannot name the addressed host', async () => {
    const elsewhere = await startTestApp({ TRUST_PROXY: '192.0.2.1' });
    try {
      const forwarded = { 'X-Forwarded-Host': 'donations.example.org', Origin: 'https://donations.example.org' };
      const response = await fetch(`${elsewhere.baseUrl}/admin/api/webhook-events/999/resend`, { method: 'POST', headers: { ...elsewhere.staff(), ...forwarded } });
      expect(((await response.json()) as { code: string }).code).toBe('cross_origin_request');
    } finally {
      await elsewhere.close();
    }
  });
});

test('the rule as a function: Sec-Fetch-Site decides where a browser sent it; Origin alone otherwise', () => {
  const authority = 'api.example.org';
  const cases: Array<[string, string, boolean]> = [
    ['', '', false],
    ['', 'https://api.example.org', false],
    ['', 'https://API.example.org', true],
    ['', 'https://api.example.org:443', true],
    ['', 'https://api.example.org.', true],
    ['', 'https://api.example.org:8443', true],
    ['', 'https://xn--pi-xla.example.org', true],
    ['same-origin', 'https://elsewhere.example', false],
    ['none', '', false],
    ['cross-site', 'https://api.example.org', true],
    ['same-site', '', true],
    ['unknown-value', '', true],
  ];
  for (const [secFetchSite, origin, refused] of cases) {
    expect([secFetchSite, origin, isCrossOrigin({ secFetchSite, origin }, authority)]).toEqual([secFetchSite, origin, refused]);
  }
  expect(isCrossOrigin({ secFetchSite: '', origin: 'http://api.example.org' }, undefined)).toBe(true);
  expect(isCrossOrigin({ secFetchSite: '', origin: 'https://api.example.org' }, 'api.example.org:443')).toBe(false);
  expect(isCrossOrigin({ secFetchSite: '', origin: 'http://[::1]:3000' }, '[0:0::1]:3000')).toBe(false);
});

describe('no 401 offers Basic, so no browser prompts for it and keeps it', () => {
  test('every guarded route challenges with Bearer only; Basic sent without being asked still works', async () => {
    const guarded = declaredRoutes(app.koa).filter(({ access, method }) => access === 'staff' && method !== 'OPTIONS');
    expect(guarded.length).toBeGreaterThan(20);
    const challenges = new Set<string>();
    for (const { method, path } of guarded) {
      const attempts: Array<Record<string, string>> = [{}, { Authorization: basicAuth(STAFF.username, 'wrong') }, { Authorization: 'Basic !!!' }, { Authorization: 'Digest x' }];
      for (const credentials of attempts) {
        const response = await send(method, concrete(path), { ...credentials, 'Content-Type': 'application/json' }, method === 'GET' ? undefined : '{}');
        expect([path, response.status]).toEqual([path, 401]);
        challenges.add(String(response.headers['www-authenticate']));
      }
    }
    expect([...challenges]).toEqual(['Bearer realm="api"']);
    expect((await send('GET', '/admin/api/info', staff())).status).toBe(200);
  });
});
