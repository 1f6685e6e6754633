import { randomBytes } from 'node:crypto';
import { createKeyring, parseSecretsKeys } from '../../src/secrets/keyring';
import { sealEndpointSecrets } from '../../src/webhook-endpoint/endpoint-store';
import { startTestApp, type TestApp } from '../support/test-app';

/*
 * Stored endpoint settings that today's configuration can no longer read or accept: secrets sealed with a key that
 * SECRETS_KEYS no longer holds, a URL that stricter URL rules refuse. The admin must be able to repair them with a
 * PUT that gives what is unreadable or refused again; a PUT that would keep it gets a 4xx naming it, never a 500.
 */

const SIGNING_SECRET = 'whsec_c2VjcmV0LXNpZ25pbmcta2V5LW9mLTI0LWJ5dGVz';
const GONE_KEY = createKeyring(parseSecretsKeys(randomBytes(32).toString('hex')));

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ SECRETS_KEYS: randomBytes(32).toString('hex'), ALLOW_INSECURE_WEBHOOK_URLS: 'false' });
});
afterAll(async () => {
  await app?.close();
});

const put = (body: unknown) => app.request('PUT', '/admin/api/webhook-endpoint', body);
const shown = async () => (await app.request('GET', '/admin/api/webhook-endpoint')).body;

async function saveWorkingEndpoint() {
  // Anew, as a PUT cannot save over the broken row of the test before without repairing it.
  await app.db('webhook_endpoints').delete();
  const saved = await put({
    url: 'https://crm.example.org/hooks',
    basic_auth_username: 'crm',
    basic_auth_password: 'crm-password',
    signing_secret: SIGNING_SECRET,
  });
  expect(saved.status).toBe(200);
}

/** The stored secrets as sealed by a key that SECRETS_KEYS no longer contains. */
async function sealStoredSecretsWithAGoneKey(which: { password: boolean; secret: boolean }) {
  const sealed = sealEndpointSecrets({ basic_auth_password: 'crm-password', signing_secret: SIGNING_SECRET }, GONE_KEY);
  await app.db('webhook_endpoints').update({
    ...(which.password && { basic_auth_password: sealed.basic_auth_password }),
    ...(which.secret && { signing_secret: sealed.signing_secret }),
  });
}

describe('secrets sealed with a key SECRETS_KEYS no longer contains', () => {
  beforeEach(async () => {
    await saveWorkingEndpoint();
    await sealStoredSecretsWithAGoneKey({ password: true, secret: true });
  });

  test('GET shows the endpoint', async () => {
    expect(await shown()).toMatchObject({ configured: true, basic_auth_password_set: true, signing_secret_set: true });
  });

  test('a PUT that keeps an unreadable secret is a 409 naming each one to give again, and changes nothing', async () => {
    const before = await app.db('webhook_endpoints').first();
    for (const body of [{ active: false }, { signing_secret: SIGNING_SECRET }, { basic_auth_password: 'new-password' }, {}]) {
      const answer = await put(body);
      expect(answer.status).toBe(409);
      expect(answer.body.code).toBe('endpoint_secret_unreadable');
      const named = answer.body.problems.map((problem: { name: string }) => problem.name);
      expect(named).toEqual(
        ['basic_auth_password', 'signing_secret'].filter((field) => !(field in body)),
      );
      expect(answer.body.error).toMatch(/SECRETS_KEYS/);
    }
    expect(await app.db('webhook_endpoints').first()).toEqual(before);
  });

  test('a PUT that gives both secrets again repairs the endpoint, sealed with the current key', async () => {
    const answer = await put({ basic_auth_password: 'new-password', signing_secret: SIGNING_SECRET, active: false });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ active: false, basic_auth_password_set: true, signing_secret_set: true });
    const stored = await app.db('webhook_endpoints').first('basic_auth_password', 'signing_secret');
    expect(app.keyring.isSealedWithCurrentKey(stored.basic_auth_password)).toBe(true);
    expect(app.keyring.open(stored.signing_secret, 'webhook_endpoints.signing_secret')).toBe(SIGNING_SECRET);
  });

  test('clearing them (null) is giving them too', async () => {
    const answer = await put({ basic_auth_username: null, basic_auth_password: null, signing_secret: null });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ basic_auth_username: null, basic_auth_password_set: false, signing_secret_set: false });
  });

  test('30 parallel repairs: every one answers 200 and the row ends readable', async () => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, index) => put({ basic_auth_password: `password-${index}`, signing_secret: SIGNING_SECRET })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(30).fill(200));
    const stored = await app.db('webhook_endpoints').first('basic_auth_password');
    expect(app.keyring.open(stored.basic_auth_password, 'webhook_endpoints.basic_auth_password')).toMatch(/^password-\d+$/);
  });
});

test('only the unreadable secret must be given again: the readable one is kept', async () => {
  await saveWorkingEndpoint();
  await sealStoredSecretsWithAGoneKey({ password: false, secret: true });
  const keeping = await put({ active: true });
  expect(keeping.status).toBe(409);
  expect(keeping.body.problems).toEqual([expect.objectContaining({ in: 'body', name: 'signing_secret' })]);
  const repaired = await put({ signing_secret: SIGNING_SECRET });
  expect(repaired.status).toBe(200);
  const stored = await app.db('webhook_endpoints').first('basic_auth_password');
  expect(app.keyring.open(stored.basic_auth_password, 'webhook_endpoints.basic_auth_password')).toBe('crm-password');
});

test('a secret altered in the database (here: copied into the other column) is unreadable the same way', async () => {
  await saveWorkingEndpoint();
  const { basic_auth_password: password } = await app.db('webhook_endpoints').first('basic_auth_password');
  await app.db('webhook_endpoints').update({ signing_secret: password });
  const keeping = await put({ basic_auth_password: 'crm-password' });
  expect(keeping).toMatchObject({ status: 409, body: { code: 'endpoint_secret_unreadable' } });
  expect(keeping.body.problems).toEqual([expect.objectContaining({ name: 'signing_secret', message: expect.stringMatching(/does not open/) })]);
  expect((await put({ signing_secret: null })).status).toBe(200);
});

describe('a stored URL that the URL rules refuse since it was saved', () => {
  beforeEach(async () => {
    await saveWorkingEndpoint();
    // Saved while ALLOW_INSECURE_WEBHOOK_URLS was on; this instance runs with it off.
    await app.db('webhook_endpoints').update({ url: 'http://127.0.0.1:9999/hooks' });
  });

  test('GET shows it', async () => {
    expect((await shown()).url).toBe('http://127.0.0.1:9999/hooks');
  });

  test('a PUT that keeps it is a 400 naming the URL rule', async () => {
    const answer = await put({ active: false });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('invalid_body');
    expect(answer.body.problems).toEqual([{ in: 'body', name: 'url', message: 'must use https' }]);
  });

  test('a PUT that gives a valid URL (and the credentials for its new origin) is accepted', async () => {
    const answer = await put({ url: 'https://crm.example.org/v2', basic_auth_password: 'for-the-new-host' });
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ url: 'https://crm.example.org/v2', basic_auth_password_set: true, signing_secret_set: true });
  });

  test('also when the stored URL does not parse at all: a PUT with a valid URL and the password is accepted', async () => {
    await app.db('webhook_endpoints').update({ url: 'https://crm.example.org:99999/\\x' });
    expect((await put({ active: true })).body.problems).toEqual([expect.objectContaining({ name: 'url' })]);
    const answer = await put({ url: 'https://crm.example.org/v3', basic_auth_password: 'for-the-new-host' });
    expect([answer.status, answer.body.url]).toEqual([200, 'https://crm.example.org/v3']);
  });

  test('a PUT that gives a valid URL but leaves the password on the old origin is refused for that, not the old URL', async () => {
    const answer = await put({ url: 'https://crm.example.org/v2' });
    expect(answer.status).toBe(400);
    expect(answer.body.problems.map((problem: { name: string }) => problem.name)).toEqual(['basic_auth_password']);
  });
});
