import { request as httpRequest } from 'node:http';
import type Router from '@koa/router';
import { readApiGroups } from '../../src/api/read-api-groups';
import { declarationOf } from '../../src/http/mount';
import { insertCampaign, insertCampaignLinks, insertContact } from '../support/api-fixtures';
import { routerOf } from '../support/app-router';
import { rawExchange } from '../support/raw-http';
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

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw request: the path goes out as written (fetch would resolve dot segments and normalise the rest). */
function exchange(method: string, path: string, headers: Record<string, string>): Promise<Answer> {
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
        let text = '';
        response.on('data', (chunk: Buffer) => (text += chunk.toString()));
        response.on('end', () => resolve({ status: response.statusCode!, headers: response.headers, body: text }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

const send = async (method: string, path: string, headers: Record<string, string>) => (await exchange(method, path, headers)).status;

/** The path with its trailing slash removed, or added where it has none. */
const otherSlash = (path: string) => (path.endsWith('/') ? path.slice(0, -1) : `${path}/`);

/** The read API's GET paths as its own surface declares them, under every root: the routes that redirect. */
const readApiGets = () =>
  readApiGroups().flatMap((group) => group.operations.filter((operation) => operation.method === 'get').map((operation) => group.prefix + operation.path));

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
        // The one redirect into a route by another spelling: the read API's GET with the other trailing slash. (A
        // spelling that is a route itself, such as the page `/admin` next to `/admin/`, answers for itself.)
        const slashRedirect = method === 'GET' && path === otherSlash(exact) && readApiGets().includes(route.path);
        const ownRoute = router.match(path, method).route;
        if (status >= 300 && status < 400 && !ownRoute && !slashRedirect) failures.push(`${method} ${path} (${route.access}) → ${status}`);
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

describe('the read API’s GET paths with the other trailing slash', () => {
  // Percent-encodings, a `+`, an empty pair, a repeated key and a `/` and `?` in a value: passed on as sent.
  const QUERY = '?dateFrom=01-01-2025&dateTo=01-31-2025&x=%2F%3Fa%20b&y=a+b&&y=2&z=/?';

  test('every route that redirects is a read-API GET, and every read-API GET redirects', () => {
    const redirecting = router.stack.filter((layer) => declarationOf(layer)?.redirectsOtherSlash).map((layer) => String(layer.path));
    expect(readApiGets()).toHaveLength(20);
    expect(redirecting.sort()).toEqual(readApiGets().sort());
  });

  test('GET and HEAD answer 308 to the documented path, the query kept byte for byte; other methods 404 with the hint', async () => {
    const failures: string[] = [];
    for (const documented of readApiGets().map(concrete)) {
      const variant = otherSlash(documented);
      for (const method of ['GET', 'HEAD']) {
        for (const query of ['', QUERY, '?']) {
          const answer = await exchange(method, variant + query, {});
          const got = { status: answer.status, location: answer.headers.location, body: answer.body };
          const expected = { status: 308, location: documented + query, body: '' };
          if (JSON.stringify(got) !== JSON.stringify(expected)) failures.push(`${method} ${variant + query} → ${JSON.stringify(got)}`);
        }
      }
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
        const answer = await exchange(method, variant, {});
        const hint = { error: `Not found; the documented path is ${documented}`, code: 'not_found' };
        if (answer.status !== 404 || answer.body !== JSON.stringify(hint)) failures.push(`${method} ${variant} → ${answer.status} ${answer.body}`);
      }
    }
    expect(failures).toEqual([]);
  });

  test('no other route redirects: its other trailing slash is a 404 that names the documented path', async () => {
    const others = mountedRoutes().filter(({ method, path }) => method === 'GET' && !readApiGets().includes(path));
    expect(others.length).toBeGreaterThan(15);
    const failures: string[] = [];
    for (const documented of others.map(({ path }) => concrete(path))) {
      const answer = await exchange('GET', otherSlash(documented), {});
      // The pages `/admin` and `/api/swagger` are routes of their own that redirect to their slash form.
      if (router.match(otherSlash(documented), 'GET').route) continue;
      if (answer.status !== 404 || JSON.parse(answer.body).error !== `Not found; the documented path is ${documented}`) {
        failures.push(`GET ${otherSlash(documented)} → ${answer.status} ${answer.body}`);
      }
    }
    expect(failures).toEqual([]);
  });

  test('the redirect is the same with and without credentials, for a resource that exists and one that does not', async () => {
    const contact = await insertContact(app.db, 'TEST', {
      gender: 'f', first_name: 'Anna', last_name: 'Muster', email: 'anna@example.org', street: 'Weg', street_number: '1',
      postal_code: '3000', city: 'Bern', country: 'CH', language: 'de',
    });
    await insertCampaignLinks(app.db, await insertCampaign(app.db, 'Bergwald'), [{ id: 'bergwald' }]);
    const variants = [
      `/api/v2.1/crm/contact/donations?contactId=${contact}`,
      `/api/v2.1/crm/contact/donations?contactId=${contact + 1000}`,
      '/api/v2.1/campaign-links/bergwald/config',
      '/api/v2.1/campaign-links/no-such-link/config',
    ];
    const staff = { Authorization: basicAuth(STAFF.username, STAFF.password) };
    for (const variant of variants) {
      const answers = await Promise.all([{}, ...Object.values(CREDENTIALS), staff].map((headers) => exchange('GET', variant, headers)));
      const seen = answers.map(({ status, headers, body }) => ({ status, location: headers.location, names: Object.keys(headers).filter((name) => name !== 'date').sort(), body }));
      expect(new Set(seen.map((answer) => JSON.stringify(answer))).size).toBe(1);
      expect(seen[0]).toMatchObject({ status: 308, location: variant.replace(/(\?|$)/, '/$1'), body: '' });
      expect(seen[0].names).not.toContain('www-authenticate');
    }
  });

  test('the target is a path, whatever Host, X-Forwarded-Host or an absolute request line say', async () => {
    const forged = { Host: 'evil.example', 'X-Forwarded-Host': 'evil.example', 'X-Forwarded-Proto': 'https' };
    expect((await exchange('GET', '/api/v1/crm/donations?a=1', forged)).headers.location).toBe('/api/v1/crm/donations/?a=1');
    const absolute = await rawExchange(app.baseUrl, 'GET http://evil.example/api/v1/crm/donations?a=1 HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n');
    expect([absolute.status, absolute.headers.location]).toEqual([308, '/api/v1/crm/donations/?a=1']);
  });

  test('another spelling never redirects into a route, only the other trailing slash does', async () => {
    const spellingsOfVariant = [
      '/api/v1/crm/donations//', // a slash too many, not the other slash
      '//api/v1/crm/donations', // as a Location, a host
      '/API/v1/crm/donations',
      '/api/v1/crm/%64onations',
      '/api%2Fv1%2Fcrm%2Fdonations',
      '/./api/v1/crm/donations',
      '/x/../api/v1/crm/donations',
      '/api/v1/crm/donations;x',
      '/api/v1/crm/donations%2F',
      '/api/v1/campaign-links/../config', // a client would follow it to /api/v1/config/
      '/api/v1/campaign-links/%2e%2e/config',
      '/api/v1/campaign-links/./config',
      '/api/v1/campaign-links//config',
      '/api/v1/campaign-links/x\\..\\..\\admin/config',
    ];
    for (const path of spellingsOfVariant) {
      for (const method of ['GET', 'HEAD']) {
        const answer = await exchange(method, path, {});
        expect([method, path, answer.status, answer.headers.location]).toEqual([method, path, 404, undefined]);
      }
    }
  });
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
