import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config';
import { routeContext } from '../../src/runtime/app';
import { createRouter } from '../../src/http/mount';
import { createGuards } from '../../src/runtime/access-guards';
import { SWAGGER_UI_PATHS } from '../../src/http/openapi/swagger-ui';
import { httpSurface } from '../../src/runtime/http-surface';
import { findWebhookSchema } from '../../src/webhooks/schemas/catalogue';
import { createLogger } from '../../src/logger';
import { documentedResponses } from '../support/documented-responses';
import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;
let document: {
  openapi: string;
  paths: Record<string, Record<string, { security: unknown[]; responses: Record<string, unknown> }>>;
};

beforeAll(async () => {
  app = await startTestApp();
  ({ document } = (await documentedResponses(app.baseUrl)) as unknown as { document: typeof document });
});

afterAll(async () => {
  await app?.close();
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

test('every mounted operation is documented, and every documented operation is mounted', () => {
  const context = routeContext({ db: app.db, config: loadConfig({ JWT_SECRET: 'x'.repeat(32) }), log: createLogger('silent') });
  const { routes } = createRouter(httpSurface(), context, createGuards(context));
  const mounted = routes
    .filter(({ method, operation }) => method !== 'OPTIONS' && !operation.undocumented)
    .map(({ method, path: routePath }) => `${method.toLowerCase()} ${routePath}`)
    .sort();
  const documentedRoutes = Object.entries(document.paths)
    .flatMap(([routePath, operations]) => Object.keys(operations).map((method) => `${method} ${routePath.replace(/\{(\w+)\}/g, ':$1')}`))
    .sort();
  expect(mounted).toEqual(documentedRoutes);
  expect(documentedRoutes).toHaveLength(46);
  for (const root of ['/api/v1', '/api/v2', '/api/v2.1', '/crm-api']) {
    for (const resource of ['crm/donations/', 'crm/contact/donations/', 'crm/contacts/', 'crm/newsletter-subscriptions/', 'campaign-links/{id}/config/']) {
      expect(document.paths).toHaveProperty([`${root}/${resource}`, 'get']);
    }
  }
  for (const path of ['/platform/checkouts', '/admin/api/webhook-endpoint', '/healthz', '/metrics']) {
    expect(document.paths).toHaveProperty([path]);
  }
});

test('every operation that documents staff authentication answers 401 without it; the others do not ask', async () => {
  for (const [routePath, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const url = `${app.baseUrl}${routePath.replace('{id}', 'unknown-link')}`;
      const withBody = method === 'post' || method === 'put';
      const response = await fetch(url, { method: method.toUpperCase(), ...(withBody ? { headers: { 'Content-Type': 'application/json' }, body: '{}' } : {}) });
      if (operation.security.some((scheme) => Object.hasOwn(scheme as object, 'bearerAuth'))) {
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

test('/metrics documents the token as optional: without METRICS_TOKEN it answers anyone, as schemathesis found', async () => {
  expect(app.config.metrics.token).toBeUndefined();
  expect(document.paths['/metrics'].get.security).toEqual([{ metricsToken: [] }, {}]);
  const response = await fetch(`${app.baseUrl}/metrics`);
  expect(response.status).toBe(200);
});

test('body codes list exactly what the server takes: a currency, country or language of the right shape that names nothing is not admitted', () => {
  const checkout = (document.paths['/platform/checkouts'] as unknown as { post: { requestBody: { content: { 'application/json': { schema: any } } } } }).post
    .requestBody.content['application/json'].schema;
  const { currency, donor } = checkout.properties;
  expect([currency.enum.includes('CHF'), currency.enum.includes('XAU'), currency.enum.includes('ABC')]).toEqual([true, false, false]);
  expect([donor.properties.country.enum.includes('CH'), donor.properties.country.enum.includes('ZZ')]).toEqual([true, false]);
  expect([donor.properties.language.enum.includes('de'), donor.properties.language.enum.includes('iw')]).toEqual([true, false]);
  expect(checkout.properties.positions.items.properties.amount).toMatchObject({ exclusiveMinimum: 0, maximum: 999_999_999.99, multipleOf: 0.01 });
});

test('every webhook event in every payload version is in the document and served as JSON Schema at a stable URL', async () => {
  const webhooks = (document as unknown as { webhooks: Record<string, { post: { requestBody: unknown } }> }).webhooks;
  expect(Object.keys(webhooks)).toHaveLength(15);
  const index = (await (await fetch(`${app.baseUrl}/api/webhooks/schemas/`)).json()) as { results: Array<{ version: string; event: string; url: string }> };
  expect(index.results.map(({ version, event }) => `${version}/${event}`).sort()).toEqual(Object.keys(webhooks).sort());
  for (const { version, event, url } of index.results) {
    expect(url).toBe(`/api/webhooks/schemas/${version}/${event}.json`);
    const response = await fetch(`${app.baseUrl}${url}`);
    expect([url, response.status, response.headers.get('content-type')]).toEqual([url, 200, 'application/schema+json']);
    expect(await response.json()).toEqual(findWebhookSchema(version, event)!.jsonSchema());
  }
  for (const unknown of ['/api/webhooks/schemas/v3/donation.completed.json', '/api/webhooks/schemas/v2.1/donation.refunded.json', '/api/webhooks/schemas/v2.1/donation.completed']) {
    expect([unknown, (await fetch(`${app.baseUrl}${unknown}`)).status]).toEqual([unknown, 404]);
  }
});

describe('Swagger UI', () => {
  test.each(SWAGGER_UI_PATHS)('%s/ serves the UI from the npm package, pointed at the document', async (base) => {
    const page = await fetch(`${app.baseUrl}${base}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await page.text();
    expect(html).toContain('<div id="swagger-ui"></div>');
    expect(html).not.toMatch(/https?:\/\//);

    const initializer = await fetch(`${app.baseUrl}${base}/swagger-initializer.js`);
    expect(await initializer.text()).toContain('url: "/api/openapi.json"');
    for (const [asset, type] of [
      ['swagger-ui.css', 'text/css; charset=utf-8'],
      ['swagger-ui-bundle.js', 'application/javascript; charset=utf-8'],
      ['favicon-32x32.png', 'image/png'],
    ]) {
      expect(html).toContain(asset);
      const response = await fetch(`${app.baseUrl}${base}/${asset}`);
      expect([asset, response.status, response.headers.get('content-type')]).toEqual([asset, 200, type]);
      expect((await response.arrayBuffer()).byteLength).toBeGreaterThan(500);
    }

    const redirect = await fetch(`${app.baseUrl}${base}`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe(`${base}/`);
  });

  test('nothing else of the package or the disk is reachable', async () => {
    for (const asset of ['package.json', 'index.js', '..%2F..%2Fpackage.json', 'swagger-ui.js.map']) {
      const response = await fetch(`${app.baseUrl}/api/swagger/${asset}`);
      expect(response.status).toBe(404);
      expect(await response.json()).toEqual({ error: 'Not found', code: 'not_found' });
    }
  });
});
