import { request as httpRequest } from 'node:http';
import type Router from '@koa/router';
import { declarationOf } from '../../src/http/mount';
import { routerOf } from '../support/app-router';
import { basicAuth, NON_STAFF, STAFF, startTestApp, type TestApp } from '../support/test-app';

/*
 * Authorization by construction, checked from the outside: every route the app mounts is found in its router (no
 * hand-kept list), and every spelling of its path is requested without and with wrong credentials. Only routes
 * declared public may ever answer 2xx (OPTIONS excepted, see the last test), and nothing may answer 5xx.
 */

let app: TestApp;
let router: Router;

beforeAll(async () => {
  const env = { METRICS_TOKEN: 'metrics-token-of-the-test', LOGIN_MAX_FAILURES_PER_CLIENT_AND_USERNAME: '100000', LOGIN_FREE_FAILURES_PER_USERNAME: '100000', LOGIN_MAX_FAILURES_PER_CLIENT: '100000' };
  app = await startTestApp(env);
  router = routerOf(app.koa);
});

afterAll(async () => {
  await app?.close();
});

interface Route {
  method: string;
  path: string;
  access: string;
}

/** Every (method, path) the router answers, with its declared access rule; a layer without a declaration fails. */
function mountedRoutes(): Route[] {
  return router.stack.flatMap((layer) => {
    const declaration = declarationOf(layer);
    expect({ path: layer.path, declared: declaration !== undefined }).toEqual({ path: layer.path, declared: true });
    return layer.methods.filter((method) => method !== 'HEAD').map((method) => ({ method, path: String(layer.path), access: declaration!.access }));
  });
}

/** Whether the router itself takes this path and method for a route declared public (a parameter may hold anything). */
function publicRoute(method: string, path: string): boolean {
  const layers = router.match(path, method).pathAndMethod.filter((layer) => layer.methods.includes(method));
  return layers.length > 0 && layers.every((layer) => declarationOf(layer)?.access === 'public');
}

/** A concrete path: each parameter filled with a plain value. */
const concrete = (path: string) => path.replace(/:[A-Za-z0-9_]+/g, '1');

const upper = (text: string) => text.toUpperCase();
const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const encodeFirstLetter = (segment: string) =>
  segment.replace(/[A-Za-z]/, (letter) => `%${letter.charCodeAt(0).toString(16).toUpperCase()}`);

/** Other spellings of a path that a lax router or a proxy might read as the same route. */
function spellings(path: string): string[] {
  const segments = path.split('/').slice(1);
  const join = (parts: string[]) => `/${parts.join('/')}`;
  const perSegment = (change: (segment: string) => string) =>
    segments.map((_, index) => join(segments.map((segment, i) => (i === index ? change(segment) : segment))));
  const variants = [
    upper(path),
    ...perSegment(upper),
    ...perSegment(capitalised),
    ...perSegment(encodeFirstLetter),
    ...perSegment((segment) => `${segment};x`),
    path.endsWith('/') ? path.slice(0, -1) : `${path}/`,
    `/${path}`,
    path.replace(/\/(?=[^/])/g, '//'),
    `${path}//`,
    `/.${path}`,
    `/x/..${path}`,
    path.replace(/\//g, '%2F'),
    `${path}%20`,
    `${path}%00`,
    `${path}.json`,
  ];
  return [...new Set(variants)].filter((variant) => variant !== path);
}

/** A raw request: the path goes out as written (fetch would resolve dot segments and normalise the rest). */
function send(method: string, path: string, headers: Record<string, string>): Promise<number> {
  const url = new URL(app.baseUrl);
  return new Promise((resolve, reject) => {
    const body = method === 'POST' || method === 'PUT' ? '{}' : undefined;
    const request = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: { ...headers, ...(body ? { 'Content-Type': 'application/json', 'Content-Length': String(body.length) } : {}) },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode!));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

const CREDENTIALS: Record<string, Record<string, string>> = {
  none: {},
  'a forged token': { Authorization: 'Bearer eyJhbGciOiJub25lIn0.eyJ1c2VyX2lkIjoxLCJ0b2tlbl90eXBlIjoiYWNjZXNzIn0.' },
  'a wrong password': { Authorization: basicAuth(STAFF.username, 'not-the-password') },
  'a non-staff account': { Authorization: basicAuth(NON_STAFF.username, NON_STAFF.password) },
};

test('every route the app mounts was declared with an access rule, and staff routes exist', () => {
  const routes = mountedRoutes();
  expect(routes.length).toBeGreaterThan(40);
  expect(routes.filter(({ access }) => access === 'staff').map(({ path }) => path)).toEqual(
    expect.arrayContaining(['/admin/api/webhook-endpoint', '/platform/checkouts', '/api/v2.1/crm/donations/']),
  );
});

test.each(Object.keys(CREDENTIALS))('with %s, no spelling of a guarded path answers 2xx, and nothing answers 5xx', async (credentials) => {
  const failures: string[] = [];
  for (const route of mountedRoutes()) {
    const exact = concrete(route.path);
    for (const method of [route.method, 'DELETE', 'PATCH']) {
      for (const path of [exact, ...spellings(exact)]) {
        const status = await send(method, path, CREDENTIALS[credentials]);
        if (status >= 500 || (status < 300 && !publicRoute(method, path))) failures.push(`${method} ${path} (${route.access}) → ${status}`);
      }
    }
  }
  expect(failures).toEqual([]);
  // About 2,500 requests, some 45 of them password checks (scrypt) with a wrong password: on a machine loaded with
  // the browser tests beside it, more than the default minute.
}, 180_000);

test('the exact spelling of a staff route asks for credentials; other spellings are unknown', async () => {
  expect(await send('GET', '/admin/api/webhook-endpoint', {})).toBe(401);
  expect(await send('PUT', '/admin/api/webhook-endpoint', {})).toBe(401);
  for (const path of ['/ADMIN/API/webhook-endpoint', '/Admin/api/webhook-endpoint', '/admin/API/webhook-endpoint', '/admin/api/webhook-endpoint/']) {
    expect([path, await send('GET', path, {})]).toEqual([path, 404]);
  }
  expect(await send('POST', '/PLATFORM/newsletter-subscriptions/1/confirm', {})).toBe(404);
  const staff = { Authorization: basicAuth(STAFF.username, STAFF.password) };
  expect(await send('GET', '/admin/api/webhook-endpoint', staff)).toBe(200);
  expect(await send('GET', '/admin/Api/info', staff)).toBe(404);
});

test('a wrong method is a 405 naming the allowed ones in Allow', async () => {
  const response = await fetch(`${app.baseUrl}/admin/api/webhook-endpoint`, { method: 'DELETE' });
  expect(response.status).toBe(405);
  expect(response.headers.get('allow')).toBe('HEAD, GET, PUT');
  expect(await response.json()).toEqual({ error: 'Method DELETE is not allowed here', code: 'method_not_allowed' });
  const trace = await send('TRACE', '/healthz', {});
  expect(trace).toBe(405);
});

/*
 * The one exception to "only public routes answer 2xx": OPTIONS, on every path, answers without credentials with an
 * empty body and `Allow` (the router's allowedMethods), because a CORS preflight never carries credentials. It
 * reveals only the method list, which the OpenAPI document publishes anyway (docs/api.md).
 */
test('OPTIONS on a guarded route answers without credentials, with Allow and an empty body, and nothing else', async () => {
  const guarded = mountedRoutes().filter(({ access }) => access !== 'public');
  expect(guarded.length).toBeGreaterThan(20);
  for (const path of new Set(guarded.map((route) => concrete(route.path)))) {
    const response = await fetch(`${app.baseUrl}${path}`, { method: 'OPTIONS' });
    const allowed = guarded.filter((route) => concrete(route.path) === path).map((route) => route.method);
    expect({ path, status: response.status, body: await response.text() }).toEqual({ path, status: 200, body: '' });
    expect(response.headers.get('allow')?.split(', ')).toEqual(expect.arrayContaining(allowed));
    expect(response.headers.get('access-control-allow-origin')).toBeNull();
  }
});
