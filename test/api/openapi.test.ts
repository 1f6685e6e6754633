import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { createApiRouter } from '../../src/api/routes';
import { SWAGGER_UI_PATHS } from '../../src/api/openapi/swagger-ui';
import { documentedResponses } from '../support/documented-responses';
import { startTestApi, type TestApi } from '../support/api-server';

let api: TestApi;
let document: {
  openapi: string;
  paths: Record<string, Record<string, { security: unknown[]; responses: Record<string, unknown> }>>;
};

beforeAll(async () => {
  api = await startTestApi();
  ({ document } = (await documentedResponses(api.baseUrl)) as unknown as { document: typeof document });
});

afterAll(async () => {
  await api?.close();
});

const validatorCli = require.resolve('@seriousme/openapi-schema-validator/bin/validate-api-cli.js');

test('the served document is valid OpenAPI 3.1', async () => {
  expect(document.openapi).toBe('3.1.0');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'openapi-'));
  try {
    const file = path.join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(document));
    // The validator is an ES module; running its command keeps Jest's CommonJS runtime out of the way.
    const { stdout } = await promisify(execFile)(process.execPath, [validatorCli, file]);
    expect(JSON.parse(stdout)).toEqual({ valid: true });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

const DOCS_PATHS = ['/api/openapi.json', ...SWAGGER_UI_PATHS];

test('every mounted route is documented, and every documented route is mounted', () => {
  const router = createApiRouter({
    db: undefined as never,
    config: undefined as never,
    log: undefined as never,
    tokens: { secrets: ['unused'], clock: () => 0 },
    loginThrottle: undefined as never,
  });
  const mounted = router.stack
    .flatMap((layer) => layer.methods.filter((method) => method === 'GET' || method === 'POST').map((method) => ({ method, path: layer.path })))
    .filter(({ path: routePath }) => !DOCS_PATHS.some((docs) => String(routePath).startsWith(docs)))
    .map(({ method, path: routePath }) => `${method.toLowerCase()} ${routePath}`)
    .sort();
  const documentedRoutes = Object.entries(document.paths)
    .flatMap(([routePath, operations]) =>
      Object.keys(operations).map((method) => `${method} ${routePath.replace(/\{(\w+)\}/g, ':$1').replace(/(.)\/$/, '$1')}`),
    )
    .sort();
  expect(mounted).toEqual(documentedRoutes);
  expect(documentedRoutes).toHaveLength(24);
  for (const root of ['/api/v1', '/api/v2', '/api/v2.1', '/crm-api']) {
    for (const resource of ['crm/donations/', 'crm/contact/donations/', 'crm/contacts/', 'crm/newsletter-subscriptions/', 'campaign-links/{id}/config/']) {
      expect(document.paths).toHaveProperty([`${root}/${resource}`, 'get']);
    }
  }
});

test('every operation that documents authentication answers 401 without it; the others do not ask', async () => {
  for (const [routePath, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const url = `${api.baseUrl}${routePath.replace('{id}', 'unknown-link')}`;
      const response = await fetch(url, method === 'post' ? { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{}' } : {});
      if (operation.security.length > 0) {
        expect([routePath, response.status]).toEqual([routePath, 401]);
        expect(operation.responses).toHaveProperty(['401']);
        expect(operation.responses).toHaveProperty(['403']);
      } else {
        expect([routePath, response.status]).not.toEqual([routePath, 401]);
        expect(operation.responses).toHaveProperty([String(response.status)]);
      }
    }
  }
});

describe('Swagger UI', () => {
  test.each(SWAGGER_UI_PATHS)('%s/ serves the UI from the npm package, pointed at the document', async (base) => {
    const page = await fetch(`${api.baseUrl}${base}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).toContain('<div id="swagger-ui"></div>');
    expect(html).not.toMatch(/https?:\/\//);

    const initializer = await fetch(`${api.baseUrl}${base}/swagger-initializer.js`);
    expect(await initializer.text()).toContain('url: "/api/openapi.json"');
    for (const [asset, type] of [
      ['swagger-ui.css', 'text/css; charset=utf-8'],
      ['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
      ['favicon-32x32.png', 'image/png'],
    ]) {
      expect(html).toContain(asset);
      const response = await fetch(`${api.baseUrl}${base}/${asset}`);
      expect([asset, response.status, response.headers.get('content-type')]).toEqual([asset, 200, type]);
      expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(500);
    }

    const redirect = await fetch(`${api.baseUrl}${base}`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe(`${base}/`);
  });

  test('nothing else of the package or the disk is reachable', async () => {
    for (const asset of ['package.json', 'index.js', '..%2F..%2Fpackage.json', 'swagger-ui.js.map']) {
      const response = await fetch(`${api.baseUrl}/api/swagger/${asset}`);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: 'Not found', code: 'not_found' });
    }
  });
});
