import { readdirSync } from 'node:fs';
import path from 'node:path';
import { ADMIN_STATIC_DIR } from '../../src/admin/page-operations';
import { rawExchange } from '../support/raw-http';
import { startTestApp, type TestApp } from '../support/test-app';

// How the admin page is served (its behaviour in a browser: test/admin/admin-page.e2e.test.ts).

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.close();
});

const get = (path: string) => fetch(`${app.baseUrl}${path}`, { redirect: 'manual' });

/** The page's modules as the browser finds them: admin.js and, from each module, the ones it imports. */
async function moduleGraph(): Promise<Map<string, string>> {
  const modules = new Map<string, string>();
  const pending = ['/admin/assets/admin.js'];
  for (let url = pending.pop(); url !== undefined; url = pending.pop()) {
    if (modules.has(url)) continue;
    const response = await get(url);
    expect([url, response.status, response.headers.get('content-type')]).toEqual([url, 200, 'text/javascript; charset=utf-8']);
    const source = await response.text();
    modules.set(url, source);
    for (const [, specifier] of source.matchAll(/^import [^;]* from '([^']+)';$/gm)) pending.push(new URL(specifier, `http://page${url}`).pathname);
  }
  return modules;
}

/** Every script in the page's folder, as the address it is served at. */
const scriptFiles = () =>
  readdirSync(ADMIN_STATIC_DIR, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.js'))
    .map((name) => `/admin/assets/${name.split(path.sep).join('/')}`);

test('/admin redirects to the page, which loads its script and style from this origin only', async () => {
  const bare = await get('/admin');
  expect([bare.status, bare.headers.get('location')]).toEqual([302, '/admin/']);

  const page = await get('/admin/');
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
  const html = await page.text();
  expect(html).toContain('<script type="module" src="/admin/assets/admin.js"></script>');
  expect(html).toContain('<link rel="stylesheet" href="/admin/assets/admin.css">');
  // Every script is a file: the policy forbids inline script, so the page must not need any.
  expect(html.match(/<script\b[^>]*>/g)).toEqual(['<script type="module" src="/admin/assets/admin.js">']);
  expect(html).not.toMatch(/\son[a-z]+=/i);

  for (const [path, type] of [
    ['/admin/assets/admin.js', 'text/javascript; charset=utf-8'],
    ['/admin/assets/admin.css', 'text/css; charset=utf-8'],
  ]) {
    const asset = await get(path);
    expect([path, asset.status, asset.headers.get('content-type')]).toEqual([path, 200, type]);
  }
});

test('every module the page imports is served as a script, and every script in its folder is one of them', async () => {
  const modules = await moduleGraph();
  expect([...modules.keys()]).toEqual(expect.arrayContaining(['/admin/assets/session.js', '/admin/assets/views/events.js', '/admin/assets/chart.js']));
  expect([...modules.keys()].sort()).toEqual(scriptFiles().sort());
});

test('every file of the page carries the security headers', async () => {
  for (const path of ['/admin/', '/admin/assets/admin.css', ...scriptFiles()]) {
    const response = await get(path);
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    // Revalidated on every load, so that after a deploy a reload never mixes old and new modules.
    if (path !== '/admin/') expect(response.headers.get('cache-control')).toBe('no-cache');
  }
});

test('the page needs no login to load, but nothing else is served: other paths are JSON 404s', async () => {
  // Files of the folder that only the type check reads.
  const typeCheckFiles = ['/admin/assets/tsconfig.json', '/admin/assets/api-types.d.ts'];
  for (const path of ['/admin/index.html', '/admin/assets/other.js', '/admin/assets/../../package.json', '/admin/assets/index.html', '/admin/assets/views', ...typeCheckFiles]) {
    const response = await get(path);
    expect([path, response.status, await response.json()]).toEqual([path, 404, { error: 'Not found', code: 'not_found' }]);
  }
  // The modules below views/ are routes of their own; no other spelling reaches them or anything beside them. Sent
  // as they are: a client would resolve the dots first.
  const raw = (target: string) => rawExchange(app.baseUrl, `GET ${target} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
  expect((await raw('/admin/assets/views/events.js')).status).toBe(200);
  for (const target of [
    '/admin/assets/views%2Fevents.js',
    '/admin/assets/views%2fevents.js',
    '/admin/assets/VIEWS/events.js',
    '/admin/assets/views/Events.js',
    '/admin/assets/views/../session.js',
    '/admin/assets/views/%2e%2e/session.js',
    '/admin/assets/./admin.js',
    '/admin/assets/views/../../../package.json',
    '/admin/assets/%2e%2e/%2e%2e/%2e%2e/package.json',
    '/admin/assets/views/',
    '/admin/assets/views/events.js%00',
    '/admin/assets/views/events.js.map',
    '/admin/assets/page-operations.ts',
    '/admin/assets/../page-operations.ts',
  ]) {
    const answer = await raw(target);
    expect([target, answer.status, JSON.parse(answer.body).code]).toEqual([target, 404, 'not_found']);
  }
  const doubled = await get('/admin//');
  expect([doubled.status, await doubled.json()]).toEqual([404, { error: 'Not found; the documented path is /admin/', code: 'not_found' }]);
  const post = await fetch(`${app.baseUrl}/admin/`, { method: 'POST' });
  expect(post.status).toBe(405);
});
