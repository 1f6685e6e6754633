import { startTestApp, type TestApp } from './support/test-app';

// How the admin page is served (its behaviour in a browser: test/e2e/admin-page.test.ts).

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.close();
});

const get = (path: string) => fetch(`${app.baseUrl}${path}`, { redirect: 'manual' });

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
    ['/admin/assets/chart.js', 'text/javascript; charset=utf-8'],
    ['/admin/assets/admin.css', 'text/css; charset=utf-8'],
  ]) {
    const asset = await get(path);
    expect([path, asset.status, asset.headers.get('content-type')]).toEqual([path, 200, type]);
  }
});

test('every file of the page carries the security headers', async () => {
  for (const path of ['/admin/', '/admin/assets/admin.js', '/admin/assets/chart.js', '/admin/assets/admin.css']) {
    const response = await get(path);
    expect(response.headers.get('content-security-policy')).toBe(
      "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    );
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
  }
});

test('the page needs no login to load, but nothing else is served: other paths are JSON 404s', async () => {
  for (const path of ['/admin/index.html', '/admin/assets/other.js', '/admin/assets/../../package.json']) {
    const response = await get(path);
    expect([path, response.status, await response.json()]).toEqual([path, 404, { error: 'Not found', code: 'not_found' }]);
  }
  const doubled = await get('/admin//');
  expect([doubled.status, await doubled.json()]).toEqual([404, { error: 'Not found; the documented path is /admin/', code: 'not_found' }]);
  const post = await fetch(`${app.baseUrl}/admin/`, { method: 'POST' });
  expect(post.status).toBe(405);
});
