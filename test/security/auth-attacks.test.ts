import { generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { upsertUser } from '../../src/auth/users';
import { basicAuth, NON_STAFF, STAFF, startTestApi, type TestApi } from '../support/api-server';

/*
 * Attacks on authentication, each answered with the right status: 401 for anything forged, expired, blocked or of
 * the wrong kind, 403 for a real account without staff permission, 429 once guessing passwords goes on too long.
 */

let api: TestApi;
// Small limits keep the test fast: every password check is a deliberately slow scrypt run.
const LOGIN_LIMITS = { perUsername: { maxFailures: 4, windowSeconds: 600 }, perClient: { maxFailures: 7, windowSeconds: 600 } };
const SECRET = 'test-secret-that-is-long-enough-for-hs256-0123'; // the app's, see test/support/api-server.ts
const CRM = '/api/v2.1/crm/contacts/';
const STAFF_ROUTES: Array<[string, string]> = [
  ['GET', CRM],
  ['GET', '/admin/api/webhook-events'],
  ['POST', '/platform/newsletter-subscriptions/1/confirm'],
];

beforeAll(async () => {
  api = await startTestApi({
    // As behind the Compose stack's proxy, whose X-Forwarded-For tells the clients apart.
    TRUST_PROXY: '1',
    LOGIN_MAX_FAILURES_PER_USERNAME: String(LOGIN_LIMITS.perUsername.maxFailures),
    LOGIN_MAX_FAILURES_PER_CLIENT: String(LOGIN_LIMITS.perClient.maxFailures),
    LOGIN_FAILURE_WINDOW_SECONDS: '600',
  });
});
afterAll(async () => {
  await api?.close();
});
beforeEach(async () => {
  await api.db('login_failures').delete();
});

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
/** Each test speaks from an address of its own, as the proxy reports it, so limits do not carry over. */
let clientCounter = 0;
const fromNewClient = () => ({ 'X-Forwarded-For': `203.0.113.${++clientCounter}` });

async function statusAndCode(response: Response) {
  const body = (await response.json()) as { code: string; error: string };
  expect(body).toEqual({ error: expect.any(String), code: expect.any(String) });
  return [response.status, body.code];
}

async function tokens(credentials = STAFF, headers: Record<string, string> = {}) {
  const response = await api.post('/authentication/create', credentials, headers);
  expect(response.status).toBe(200);
  return (await response.json()) as { access: string; refresh: string };
}

describe('forged and misused tokens', () => {
  test('alg "none", other algorithms, tampered payloads and signatures are 401 token_not_valid', async () => {
    const { access } = await tokens();
    const claims = jwt.decode(access) as Record<string, unknown>;
    const [header, payload, signature] = access.split('.');
    const otherUser = Buffer.from(JSON.stringify({ ...claims, user_id: (claims.user_id as number) + 1 })).toString('base64url');
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forgeries = {
      'alg none': jwt.sign(claims, '', { algorithm: 'none' }),
      'alg none, signature kept': `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.${signature}`,
      'HS512 with the right secret': jwt.sign(claims, SECRET, { algorithm: 'HS512' }),
      'HS384 with the right secret': jwt.sign(claims, SECRET, { algorithm: 'HS384' }),
      'RS256 with an attacker key': jwt.sign(claims, privateKey, { algorithm: 'RS256' }),
      'HS256 keyed with a public key (algorithm confusion)': jwt.sign(claims, publicKey.export({ type: 'spki', format: 'pem' }), {
        algorithm: 'HS256',
      }),
      'payload changed, signature kept': `${header}.${otherUser}.${signature}`,
      'signature flipped': `${header}.${payload}.${signature.slice(0, -2)}${signature.endsWith('A') ? 'BB' : 'AA'}`,
      'no signature': `${header}.${payload}.`,
      'other secret': jwt.sign(claims, 'another-secret-that-is-long-enough-0123456789'),
      'not a JWT': 'eyJhbGciOiJIUzI1NiJ9',
      'empty claims': jwt.sign({}, SECRET),
      'user id as a string': jwt.sign({ ...claims, user_id: String(claims.user_id) }, SECRET),
      'unknown user': jwt.sign({ ...claims, user_id: 999_999 }, SECRET),
    };
    for (const [name, token] of Object.entries(forgeries)) {
      const response = await api.get(CRM, bearer(token));
      const expected = name === 'unknown user' ? [401, 'not_authenticated'] : [401, 'token_not_valid'];
      expect([name, ...(await statusAndCode(response))]).toEqual([name, ...expected]);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="api"/);
    }
  });

  test('expired tokens: access after 5 minutes, refresh after a day', async () => {
    const { access, refresh } = await tokens();
    const issuedAt = api.clock.now;
    try {
      api.clock.now = issuedAt + 301;
      expect(await statusAndCode(await api.get(CRM, bearer(access)))).toEqual([401, 'token_not_valid']);
      expect(await statusAndCode(await api.post('/authentication/verify', { token: access }))).toEqual([401, 'token_not_valid']);
      api.clock.now = issuedAt + 86_401;
      expect(await statusAndCode(await api.post('/authentication/refresh', { refresh }))).toEqual([401, 'token_not_valid']);
      expect(await statusAndCode(await api.post('/authentication/logout', { refresh }))).toEqual([401, 'token_not_valid']);
    } finally {
      api.clock.now = issuedAt;
    }
  });

  test('a refresh token cannot be reused after rotation, nor after logout', async () => {
    const first = await tokens();
    const rotated = await api.post('/authentication/refresh', { refresh: first.refresh });
    expect(rotated.status).toBe(200);
    const second = (await rotated.json()) as { refresh: string };
    expect(await statusAndCode(await api.post('/authentication/refresh', { refresh: first.refresh }))).toEqual([401, 'token_not_valid']);

    expect((await api.post('/authentication/logout', { refresh: second.refresh })).status).toBe(200);
    for (const path of ['/authentication/refresh', '/authentication/logout']) {
      expect([path, ...(await statusAndCode(await api.post(path, { refresh: second.refresh })))]).toEqual([path, 401, 'token_not_valid']);
    }
    expect(await statusAndCode(await api.post('/authentication/verify', { token: second.refresh }))).toEqual([401, 'token_not_valid']);
  });

  test('an access token is not a refresh token, and a refresh token is not an access token', async () => {
    const { access, refresh } = await tokens();
    expect(await statusAndCode(await api.post('/authentication/refresh', { refresh: access }))).toEqual([401, 'token_not_valid']);
    expect(await statusAndCode(await api.post('/authentication/logout', { refresh: access }))).toEqual([401, 'token_not_valid']);
    for (const [method, path] of STAFF_ROUTES) {
      const response = await fetch(`${api.baseUrl}${path}`, { method, headers: bearer(refresh) });
      expect([path, ...(await statusAndCode(response))]).toEqual([path, 401, 'token_not_valid']);
    }
  });

  test('a real account without staff permission is 403 everywhere, with a token or with Basic', async () => {
    const { access } = await tokens(NON_STAFF);
    for (const [method, path] of STAFF_ROUTES) {
      for (const authorization of [`Bearer ${access}`, basicAuth(NON_STAFF.username, NON_STAFF.password)]) {
        const response = await fetch(`${api.baseUrl}${path}`, { method, headers: { Authorization: authorization } });
        expect([path, ...(await statusAndCode(response))]).toEqual([path, 403, 'permission_denied']);
      }
    }
  });
});

describe('HTTP Basic', () => {
  test('wrong or malformed credentials are 401 with a challenge, never a 500', async () => {
    const headers = [
      basicAuth(STAFF.username, 'falsch'),
      basicAuth('niemand', STAFF.password),
      basicAuth('', STAFF.password),
      basicAuth(STAFF.username, ''),
      basicAuth(`${STAFF.username}\u0000`, STAFF.password),
      basicAuth('x'.repeat(5_000), 'y'),
      `Basic ${Buffer.from(STAFF.username).toString('base64')}`,
      `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0x00]).toString('base64')}`,
      'Basic ====',
      'Basic !!!',
      'Basic',
      'basic    ',
      `Basic ${Buffer.from(`${STAFF.username}:${STAFF.password}`).toString('base64')} extra`,
    ];
    for (const authorization of headers) {
      const response = await api.get(CRM, { Authorization: authorization, ...fromNewClient() });
      expect([authorization, ...(await statusAndCode(response))]).toEqual([authorization, 401, 'not_authenticated']);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="api", Basic realm="api"');
    }
  });
});

describe('repeated failed logins', () => {
  const { maxFailures, windowSeconds } = LOGIN_LIMITS.perUsername;

  test('a user name is locked after too many failures (429, Retry-After), even for the right password, until the window ends', async () => {
    const start = api.clock.now;
    try {
      for (let i = 0; i < maxFailures; i++) {
        // From changing addresses: the user name alone is what is counted here.
        const response = await api.post('/authentication/create', { ...STAFF, password: `guess-${i}` }, fromNewClient());
        expect(response.status).toBe(401);
      }
      const locked = await api.post('/authentication/create', STAFF, fromNewClient());
      expect(await statusAndCode(locked)).toEqual([429, 'too_many_login_failures']);
      expect(Number(locked.headers.get('retry-after'))).toBe(windowSeconds);
      const basic = await api.get(CRM, { Authorization: basicAuth(STAFF.username, STAFF.password), ...fromNewClient() });
      expect(await statusAndCode(basic)).toEqual([429, 'too_many_login_failures']);

      // Other accounts and tokens already issued are not affected.
      expect((await api.post('/authentication/create', NON_STAFF, fromNewClient())).status).toBe(200);
      api.clock.now = start + 60;
      const later = await api.post('/authentication/create', STAFF, fromNewClient());
      expect(Number(later.headers.get('retry-after'))).toBe(windowSeconds - 60);

      api.clock.now = start + windowSeconds;
      expect((await api.post('/authentication/create', STAFF, fromNewClient())).status).toBe(200);
    } finally {
      api.clock.now = start;
    }
  });

  test('a success forgets the failures of the user name', async () => {
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < maxFailures - 1; i++) {
        expect((await api.post('/authentication/create', { ...STAFF, password: 'falsch' }, fromNewClient())).status).toBe(401);
      }
      expect((await api.post('/authentication/create', STAFF, fromNewClient())).status).toBe(200);
    }
  });

  test('one address is limited across user names, and Basic failures count too; other addresses are not', async () => {
    const client = fromNewClient();
    const { maxFailures: perClient } = LOGIN_LIMITS.perClient;
    for (let i = 0; i < perClient; i++) {
      const response =
        i % 2 === 0
          ? await api.post('/authentication/create', { username: `user-${i}`, password: 'x' }, client)
          : await api.get(CRM, { Authorization: basicAuth(`user-${i}`, 'x'), ...client });
      expect(response.status).toBe(401);
    }
    const blocked = await api.post('/authentication/create', { username: 'someone-else', password: 'x' }, client);
    expect(await statusAndCode(blocked)).toEqual([429, 'too_many_login_failures']);
    expect(blocked.headers.get('retry-after')).toMatch(/^[1-9][0-9]*$/);
    expect((await api.get(CRM, { Authorization: basicAuth(STAFF.username, STAFF.password), ...client })).status).toBe(429);
    expect((await api.get(CRM, { Authorization: basicAuth(STAFF.username, STAFF.password), ...fromNewClient() })).status).toBe(200);
  });

  test('a successful Basic request gives the address its slot back, so an integration is never limited', async () => {
    const client = fromNewClient();
    for (let i = 0; i < LOGIN_LIMITS.perClient.maxFailures + 5; i++) {
      expect((await api.get(CRM, { Authorization: basicAuth(STAFF.username, STAFF.password), ...client })).status).toBe(200);
    }
  });

  test('concurrent guesses cannot get past the limit: at most the limit is checked', async () => {
    await upsertUser(api.db, { username: 'ziel', password: 'geheim-und-lang', isStaff: true });
    const responses = await Promise.all(
      Array.from({ length: maxFailures * 3 }, (_, i) =>
        api.post('/authentication/create', { username: 'ziel', password: `guess-${i}` }, fromNewClient()),
      ),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(maxFailures);
    expect(statuses.filter((s) => s === 429)).toHaveLength(maxFailures * 2);
  });

  test('the attempted user names are not stored as typed', async () => {
    await api.post('/authentication/create', { username: 'my-password-typed-in-the-wrong-box', password: 'x' }, fromNewClient());
    const keys = (await api.db('login_failures').select('key')).map((row: { key: string }) => row.key);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys.join(' ')).not.toMatch(/wrong-box|203\.0\.113/);
  });
});
