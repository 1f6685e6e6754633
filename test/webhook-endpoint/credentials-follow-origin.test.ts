import { dnsTable, PUBLIC_ADDRESS } from '../support/dns-table';
import { startTestApp, type TestApp } from '../support/test-app';

/*
 * The endpoint's Basic-auth credentials were given for one origin (scheme, host, port). An admin who moves the URL
 * to another origin and leaves the password out must not hand the old host's password to the new host.
 */

let app: TestApp;
const resolveHost = dnsTable({ 'crm.example.org': [PUBLIC_ADDRESS], 'attacker.example.net': [PUBLIC_ADDRESS] });

beforeAll(async () => {
  app = await startTestApp({}, { resolveHost });
});
afterAll(async () => {
  await app?.close();
});

const put = (body: unknown) => app.request('PUT', '/admin/api/webhook-endpoint', body);
const shown = async () => (await app.request('GET', '/admin/api/webhook-endpoint')).body;

beforeEach(async () => {
  const saved = await put({
    url: 'https://crm.example.org/hooks',
    basic_auth_username: 'crm',
    basic_auth_password: 'crm-password',
    signing_secret: 'whsec_c2VjcmV0LXNpZ25pbmcta2V5LW9mLTI0LWJ5dGVz',
  });
  expect(saved.status).toBe(200);
});

test('a URL on the same origin keeps the credentials', async () => {
  const moved = await put({ url: 'https://CRM.example.org:443/v2/hooks' });
  expect(moved.status).toBe(200);
  // Stored as the parser normalises it: the origin that the credentials were given for, spelled once.
  expect(moved.body).toMatchObject({ url: 'https://crm.example.org/v2/hooks', basic_auth_username: 'crm', basic_auth_password_set: true });
});

test('another origin without the password is a 400 that names the rule, and changes nothing', async () => {
  const before = await shown();
  for (const body of [
    { url: 'https://attacker.example.net/hooks' },
    { url: 'https://attacker.example.net/hooks', basic_auth_username: 'crm' },
    { url: 'https://crm.example.org:8443/hooks', active: false },
    { url: 'http://127.0.0.1:9/hooks' },
  ]) {
    const response = await put(body);
    expect([body, response.status, response.body.code]).toEqual([body, 400, 'invalid_body']);
    expect(response.body.error).toMatch(/^basic_auth_password: required when the url moves to another origin/);
  }
  expect(await shown()).toEqual(before);
});

test('another origin with new credentials, or explicitly none, is accepted; the signing secret stays', async () => {
  const withNew = await put({ url: 'https://attacker.example.net/hooks', basic_auth_password: 'other-password' });
  expect(withNew.status).toBe(200);
  expect(withNew.body).toMatchObject({ url: 'https://attacker.example.net/hooks', basic_auth_password_set: true, signing_secret_set: true });

  const withNone = await put({ url: 'https://crm.example.org/hooks', basic_auth_username: null, basic_auth_password: null });
  expect(withNone.status).toBe(200);
  expect(withNone.body).toMatchObject({ basic_auth_username: null, basic_auth_password_set: false, signing_secret_set: true });
});
