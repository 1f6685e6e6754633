import jwt from 'jsonwebtoken';
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db/knex';
import { PRODUCTION_ENV } from '../support/production-env';
import { bearer, STAFF, startTestApp, type TestApp } from '../support/test-app';

/*
 * Rotating the token key as docs/secrets.md#jwt_secrets-api-tokens describes, with API processes of each step side by side over one
 * database, as during a rolling deploy: nobody is logged out at any step.
 */

const OLD = 'old-key-0123456789-0123456789-0123456789';
const NEW = 'new-key-9876543210-9876543210-9876543210';
const CRM = '/api/v2.1/crm/contacts/';

/** The database every process of the test serves, with the staff user in it. */
let shared: TestApp;
const apps: TestApp[] = [];

beforeAll(async () => {
  shared = await startTestApp();
});
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await shared?.close();
});

/** One API process with the given key settings, over the shared database. */
async function apiWith(env: Record<string, string>) {
  const app = await startTestApp(env, { connect: () => createDb({ connectionString: shared.databaseUrl }) });
  apps.push(app);
  const post = (path: string, body: unknown) => app.anonymous.request('POST', path, body);
  return {
    post,
    crmStatus: async (access: string) => (await app.get(CRM, bearer(access))).status,
    async signIn(): Promise<{ access: string; refresh: string }> {
      const response = await post('/authentication/create', STAFF);
      expect(response.status).toBe(200);
      return response.body;
    },
  };
}

const keyIdOf = (token: string) => jwt.decode(token, { complete: true })!.header.kid;

test('old key, then both (old signs), then both (new signs), then new alone: every session survives each step', async () => {
  const before = await apiWith({ JWT_SECRET: OLD });
  const oldSession = await before.signIn();

  // Step 1: the new key is accepted everywhere before anyone signs with it.
  const step1 = await apiWith({ JWT_SECRETS: `${OLD},${NEW}` });
  expect(await step1.crmStatus(oldSession.access)).toBe(200);
  expect(keyIdOf((await step1.signIn()).access)).toBe(keyIdOf(oldSession.access));

  // Step 2: the new key signs; processes still at step 1 accept what it signs.
  const step2 = await apiWith({ JWT_SECRETS: `${NEW},${OLD}` });
  expect(await step2.crmStatus(oldSession.access)).toBe(200);
  const refreshed = await step2.post('/authentication/refresh', { refresh: oldSession.refresh });
  expect(refreshed.status).toBe(200);
  const newSession = refreshed.body;
  expect(keyIdOf(newSession.access)).not.toBe(keyIdOf(oldSession.access));
  expect(await step1.crmStatus(newSession.access)).toBe(200);
  expect((await step1.post('/authentication/verify', { token: newSession.refresh })).status).toBe(200);

  // Step 3, a day later in real life: the old key is gone, and so are the tokens it signed.
  const step3 = await apiWith({ JWT_SECRETS: NEW });
  expect(await step3.crmStatus(newSession.access)).toBe(200);
  expect((await step3.post('/authentication/refresh', { refresh: newSession.refresh })).status).toBe(200);
  const stale = await before.signIn();
  expect(await step3.crmStatus(stale.access)).toBe(401);
  expect((await step3.post('/authentication/refresh', { refresh: stale.refresh })).status).toBe(401);
});

test('a token under a listed key id but signed with another key is refused', async () => {
  const api = await apiWith({ JWT_SECRETS: `${NEW},${OLD}` });
  const { access } = await api.signIn();
  const claims = jwt.decode(access) as object;
  const forged = jwt.sign(claims, 'attacker-key-0123456789-0123456789-012', { keyid: keyIdOf(access) });
  expect(await api.crmStatus(forged)).toBe(401);
});

describe('configuration', () => {
  const secretsOf = (env: Record<string, string>) => loadConfig(env).auth.jwtSecrets;

  test('JWT_SECRETS is a comma-separated list; JWT_SECRET a list of one', () => {
    expect(secretsOf({ JWT_SECRETS: ` ${NEW} ,${OLD}, ` })).toEqual([NEW, OLD]);
    expect(secretsOf({ JWT_SECRET: OLD })).toEqual([OLD]);
    expect(secretsOf({ JWT_SECRET: OLD, JWT_SECRETS: '' })).toEqual([OLD]);
    expect(secretsOf({ JWT_SECRET: OLD, JWT_SECRETS: `${NEW},${OLD}` })).toEqual([NEW, OLD]);
    const { JWT_SECRET: _single, ...production } = PRODUCTION_ENV;
    expect(loadConfig({ ...production, JWT_SECRETS: `${NEW},${OLD}` }).auth.jwtSecretGenerated).toBe(false);
  });

  test('refuses short secrets, a secret listed twice, and a JWT_SECRET that is not among JWT_SECRETS', () => {
    expect(() => loadConfig({ JWT_SECRETS: `${NEW},too-short` })).toThrow(/each secret in JWT_SECRETS must be at least 32 characters/);
    expect(() => loadConfig({ JWT_SECRET: 'too-short' })).toThrow(/JWT_SECRET must be at least 32 characters/);
    expect(() => loadConfig({ JWT_SECRETS: `${NEW},${NEW}` })).toThrow(/twice/);
    expect(() => loadConfig({ JWT_SECRET: OLD, JWT_SECRETS: NEW })).toThrow(/JWT_SECRET must be one of JWT_SECRETS/);
  });
});
