import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { insertCampaign, insertCampaignLinks } from '../support/api-fixtures';
import { STAFF, startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
  const campaignId = await insertCampaign(app.db, 'Bergwaldprojekt');
  await insertCampaignLinks(app.db, campaignId, [{ id: 'bergwald' }]);
});

afterAll(async () => {
  await app?.close();
});

test('every answer says nosniff; tokens and personal data are never stored by a cache; public config is cacheable', async () => {
  const token = await app.anonymous.post('/authentication/create', STAFF);
  const contacts = await app.get('/api/v2.1/crm/contacts/');
  const unauthenticated = await fetch(`${app.baseUrl}/api/v2.1/crm/contacts/`);
  const missing = await fetch(`${app.baseUrl}/nothing-here`);
  const config = await fetch(`${app.baseUrl}/api/v2.1/campaign-links/bergwald/config/`);
  const unknownLink = await fetch(`${app.baseUrl}/api/v2.1/campaign-links/none/config/`);
  for (const [name, response, cacheControl] of [
    ['token', token, 'no-store'],
    ['contacts', contacts, 'no-store'],
    ['401', unauthenticated, 'no-store'],
    ['404', missing, 'no-store'],
    ['campaign link', config, 'public, max-age=60'],
    ['unknown campaign link', unknownLink, 'no-store'],
  ] as const) {
    expect([name, response.headers.get('x-content-type-options'), response.headers.get('cache-control')]).toEqual([name, 'nosniff', cacheControl]);
  }
  expect(config.status).toBe(200);
});

test('Swagger UI has a content security policy, cannot be framed, and keeps no credentials in localStorage', async () => {
  const page = await fetch(`${app.baseUrl}/api/swagger/`);
  const policy = page.headers.get('content-security-policy') ?? '';
  expect(policy).toContain("script-src 'self'");
  expect(policy).toContain("frame-ancestors 'none'");
  expect(policy).not.toContain("script-src 'self' 'unsafe-inline'");
  expect(page.headers.get('x-frame-options')).toBe('DENY');
  const initializer = await (await fetch(`${app.baseUrl}/api/swagger/swagger-initializer.js`)).text();
  expect(initializer).not.toContain('persistAuthorization');
});

/** A raw POST with the given headers and bytes (fetch would refuse some of these bodies). */
function post(path: string, headers: Record<string, string>, body: Buffer): Promise<{ status: number; body: unknown }> {
  const url = new URL(app.baseUrl);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: url.hostname, port: url.port, method: 'POST', path, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    request.on('error', reject);
    request.end(body);
  });
}

test('a compressed body that does not decompress is a 400, an unknown encoding a 415, a good one is read', async () => {
  const json = { 'Content-Type': 'application/json' };
  const good = gzipSync(Buffer.from(JSON.stringify(STAFF)));
  for (const encoding of ['gzip', 'deflate', 'br']) {
    const broken = await post('/authentication/create', { ...json, 'Content-Encoding': encoding }, Buffer.from('definitely not compressed'));
    expect([encoding, broken.status, broken.body]).toEqual([encoding, 400, { error: 'The body does not decompress as its Content-Encoding says', code: 'malformed_body' }]);
  }
  const truncated = await post('/authentication/create', { ...json, 'Content-Encoding': 'gzip' }, good.subarray(0, good.length - 8));
  expect(truncated.status).toBe(400);
  const unknown = await post('/authentication/create', { ...json, 'Content-Encoding': 'compress' }, Buffer.from('{}'));
  expect([unknown.status, (unknown.body as { code: string }).code]).toEqual([415, 'unsupported_media_type']);
  const ok = await post('/authentication/create', { ...json, 'Content-Encoding': 'gzip' }, good);
  expect(ok.status).toBe(200);
});
