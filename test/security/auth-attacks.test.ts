import { generateKeyPairSync } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { upsertUser } from '../../src/auth/accounts';
import { basicAuth, bearer, NON_STAFF, STAFF, startTestApp, TEST_JWT_SECRET as SECRET, type TestApp } from '../support/test-app';
import { loopbackClients, requestFrom } from '../support/loopback-client';

/*
 * Attacks on authentication, each answered with the right status: 401 for anything forged, expired, blocked or of
 * the wrong kind, 403 for a real account without staff permission, 429 once one client goes on guessing one
 * account's password too long, and never a refusal of the right password because of someone else's guesses.
 */

let app: TestApp;
// Small limits keep the test fast: every password check is a deliberately slow scrypt run.
const MAX_FAILURES_PER_PAIR = 4;
const FREE_FAILURES_PER_USERNAME = 6;
const WINDOW_SECONDS = 600;
const CRM = '/api/v2.1/crm/contacts/';
const STAFF_ROUTES: Array<[string, string]> = [
  ['GET', CRM],
  ['GET', '/admin/api/webhook-events'],
  ['POST', '/platform/newsletter-subscriptions/1/confirm'],
];

beforeAll(async () => {
  app = await startTestApp({
    LOGIN_MAX_FAILURES_PER_CLIENT_AND_USERNAME: String(MAX_FAILURES_PER_PAIR),
    LOGIN_FREE_FAILURES_PER_USERNAME: String(FREE_FAILURES_PER_USERNAME),
    LOGIN_MAX_DELAY_SECONDS: '0.5',
    LOGIN_FAILURE_WINDOW_SECONDS: String(WINDOW_SECONDS),
  });
});
afterAll(async () => {
  await app?.close();
});
beforeEach(async () => {
  await app.db('login_failures').delete();
});

/** Each call a client of its own: a loopback address the connection starts from (no proxy header involved). */
const newClient = loopbackClients();

async function statusAndCode(response: Response) {
  const body = (await response.json()) as { code: string; error: string };
  expect(body).toEqual({ error: expect.any(String), code: expect.any(String) });
  return [response.status, body.code];
}

async function tokens(credentials = STAFF, headers: Record<string, string> = {}) {
  const response = await app.anonymous.post('/authentication/create', credentials, headers);
  expect(response.status).toBe(200);
  return (await response.json()) as { access: string; refresh: string };
}

describe('forged and misused tokens', () => {
  test('alg "none", other algorithms, tampered payloads and signatures are 401 token_not_valid', async () => {
    const { access } = await tokens();
    const claims = jwt.decode(access) as Record<string, unknown>;
    const { kid } = jwt.decode(access, { complete: true })!.header;
    const withKid = (algorithm: jwt.Algorithm = 'HS256') => ({ algorithm, keyid: kid });
    const [header, payload, signature] = access.split('.');
    const otherUser = Buffer.from(JSON.stringify({ ...claims, user_id: (claims.user_id as number) + 1 })).toString('base64url');
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forgeries = {
      'alg none': jwt.sign(claims, '', { algorithm: 'none' }),
      'alg none, signature kept': `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${payload}.${signature}`,
      'HS512 with the right secret': jwt.sign(claims, SECRET, withKid('HS512')),
      'HS384 with the right secret': jwt.sign(claims, SECRET, withKid('HS384')),
      'RS256 with an attacker key': jwt.sign(claims, privateKey, withKid('RS256')),
      'HS256 keyed with a public key (algorithm confusion)': jwt.sign(
        claims,
        publicKey.export({ type: 'spki', format: 'pem' }),
        withKid(),
      ),
      'payload changed, signature kept': `${header}.${otherUser}.${signature}`,
      'signature flipped': `${header}.${payload}.${signature.slice(0, -2)}${signature.endsWith('A') ? 'BB' : 'AA'}`,
      'no signature': `${header}.${payload}.`,
      'other secret': jwt.sign(claims, 'another-secret-that-is-long-enough-0123456789'),
      "other secret under the app's key id": jwt.sign(claims, 'another-secret-that-is-long-enough-0123456789', withKid()),
      'right secret, no key id': jwt.sign(claims, SECRET),
      'right secret, unknown key id': jwt.sign(claims, SECRET, { keyid: 'not-a-key-of-ours' }),
      'not a JWT': 'eyJhbGciOiJIUzI1NiJ9',
      'header of a JWT, payload not JSON': `${header}.${Buffer.from('{not json').toString('base64url')}.${signature}`,
      'empty claims': jwt.sign({}, SECRET, withKid()),
      'user id as a string': jwt.sign({ ...claims, user_id: String(claims.user_id) }, SECRET, withKid()),
      'no token version': jwt.sign({ ...claims, token_version: undefined }, SECRET, withKid()),
      'token version as a string': jwt.sign({ ...claims, token_version: String(claims.token_version) }, SECRET, withKid()),
      'session id not a UUID': jwt.sign({ ...claims, sid: "x' OR '1'='1" }, SECRET, withKid()),
      'session start as a string': jwt.sign({ ...claims, auth_time: String(claims.auth_time) }, SECRET, withKid()),
      'unknown user': jwt.sign({ ...claims, user_id: 999_999 }, SECRET, withKid()),
    };
    for (const [name, token] of Object.entries(forgeries)) {
      const response = await app.get(CRM, bearer(token));
      const expected = name === 'unknown user' ? [401, 'not_authenticated'] : [401, 'token_not_valid'];
      expect([name, ...(await statusAndCode(response))]).toEqual([name, ...expected]);
      expect(response.headers.get('www-authenticate')).toMatch(/^Bearer realm="api"/);
    }
  });

  test('expired tokens: access after 5 minutes, refresh after a day', async () => {
    const { access, refresh } = await tokens();
    const issuedAt = app.clock.now;
    try {
      app.clock.now = issuedAt + 301;
      expect(await statusAndCode(await app.get(CRM, bearer(access)))).toEqual([401, 'token_not_valid']);
      expect(await statusAndCode(await app.anonymous.post('/authentication/verify', { token: access }))).toEqual([401, 'token_not_valid']);
      app.clock.now = issuedAt + 86_401;
      expect(await statusAndCode(await app.anonymous.post('/authentication/refresh', { refresh }))).toEqual([401, 'token_not_valid']);
      expect(await statusAndCode(await app.anonymous.post('/authentication/logout', { refresh }))).toEqual([401, 'token_not_valid']);
    } finally {
      app.clock.now = issuedAt;
    }
  });

  test('a refresh token cannot be reused after rotation, nor after logout', async () => {
    const first = await tokens();
    const rotated = await app.anonymous.post('/authentication/refresh', { refresh: first.refresh });
    expect(rotated.status).toBe(200);
    const second = (await rotated.json()) as { refresh: string };
    expect(await statusAndCode(await app.anonymous.post('/authentication/refresh', { refresh: first.refresh }))).toEqual([401, 'token_not_valid']);
    // That reuse ended the session, so the token it was rotated into is refused too.
    expect(await statusAndCode(await app.anonymous.post('/authentication/refresh', { refresh: second.refresh }))).toEqual([401, 'token_not_valid']);

    const other = await tokens();
    expect((await app.anonymous.post('/authentication/logout', { refresh: other.refresh })).status).toBe(200);
    for (const path of ['/authentication/refresh', '/authentication/logout']) {
      expect([path, ...(await statusAndCode(await app.anonymous.post(path, { refresh: other.refresh })))]).toEqual([path, 401, 'token_not_valid']);
    }
    expect(await statusAndCode(await app.anonymous.post('/authentication/verify', { token: other.refresh }))).toEqual([401, 'token_not_valid']);
  });

  test('an access token is not a refresh token, and a refresh token is not an access token', async () => {
    const { access, refresh } = await tokens();
    expect(await statusAndCode(await app.anonymous.post('/authentication/refresh', { refresh: access }))).toEqual([401, 'token_not_valid']);
    expect(await statusAndCode(await app.anonymous.post('/authentication/logout', { refresh: access }))).toEqual([401, 'token_not_valid']);
    for (const [method, path] of STAFF_ROUTES) {
      const response = await fetch(`${app.baseUrl}${path}`, { method, headers: bearer(refresh) });
      expect([path, ...(await statusAndCode(response))]).toEqual([path, 401, 'token_not_valid']);
    }
  });

  test('a real account without staff permission is 403 everywhere, with a token or with Basic', async () => {
    const { access } = await tokens(NON_STAFF);
    for (const [method, path] of STAFF_ROUTES) {
      for (const authorization of [`Bearer ${access}`, basicAuth(NON_STAFF.username, NON_STAFF.password)]) {
        const response = await fetch(`${app.baseUrl}${path}`, { method, headers: { Authorization: authorization } });
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
      const response = await app.get(CRM, { Authorization: authorization });
      expect([authorization, ...(await statusAndCode(response))]).toEqual([authorization, 401, 'not_authenticated']);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="api"');
    }
  });
});


describe('failed logins', () => {
  type Credentials = { username: string; password: string };
  const create = (client: string, credentials: Credentials) =>
    requestFrom(client, `${app.baseUrl}/authentication/create`, { method: 'POST', body: credentials });
  const basicGet = (client: string, { username, password }: Credentials) =>
    requestFrom(client, `${app.baseUrl}${CRM}`, { headers: { Authorization: basicAuth(username, password) } });
  const wrong = (i: number) => ({ username: STAFF.username, password: `guess-${i}` });
  const times = <T>(n: number, make: (i: number) => Promise<T>) => Promise.all(Array.from({ length: n }, (_, i) => make(i)));

  test('30 parallel requests with the right password all succeed, with Basic and for tokens, after mistakes too', async () => {
    const client = newClient();
    for (let i = 0; i < MAX_FAILURES_PER_PAIR - 1; i++) expect((await basicGet(client, wrong(i))).status).toBe(401);
    expect((await times(30, () => basicGet(client, STAFF))).map((r) => r.status)).toEqual(Array(30).fill(200));
    expect((await times(30, () => create(client, STAFF))).map((r) => r.status)).toEqual(Array(30).fill(200));
  });

  test('a burst of 60 parallel first requests with the right password shares one check: all 200, none turned away', async () => {
    // An account no request has verified yet, from an address it never signed in from: every request a stranger's.
    const burst = { username: 'burst', password: 'Chasseral-1607-m' };
    await upsertUser(app.db, { ...burst, isStaff: true });
    const client = newClient();
    expect((await times(60, () => basicGet(client, burst))).map((r) => r.status)).toEqual(Array(60).fill(200));
  });

  test('one client failing too often for one user name gets 429 with Retry-After, even for the right password; nobody else does', async () => {
    const guesser = newClient();
    for (let i = 0; i < MAX_FAILURES_PER_PAIR; i++) {
      // Token creation and Basic count alike.
      const response = i % 2 === 0 ? await create(guesser, wrong(i)) : await basicGet(guesser, wrong(i));
      expect(response.status).toBe(401);
    }
    for (const locked of [await create(guesser, STAFF), await basicGet(guesser, STAFF)]) {
      expect([locked.status, locked.body.code]).toEqual([429, 'too_many_login_failures']);
      // Until the window that began with the first failure ends.
      expect(Number(locked.headers['retry-after'])).toBeGreaterThan(WINDOW_SECONDS - 60);
      expect(Number(locked.headers['retry-after'])).toBeLessThanOrEqual(WINDOW_SECONDS);
    }
    expect((await create(newClient(), STAFF)).status).toBe(200);
    expect((await basicGet(newClient(), STAFF)).status).toBe(200);
    expect((await create(guesser, NON_STAFF)).status).toBe(200);
  });

  test('guessing from ever new addresses never locks the owner out: the user name is slowed for strangers, not locked', async () => {
    // An account of its own: the staff account's password is remembered by this process from the tests before.
    const target = { username: 'zielkonto', password: 'Uetliberg-869-m' };
    await upsertUser(app.db, { ...target, isStaff: true });
    const attackers = [newClient(), newClient(), newClient()];
    const wrongForTarget = (i: number) => ({ ...target, password: `guess-${i}` });
    for (const attacker of attackers) {
      for (let i = 0; i < MAX_FAILURES_PER_PAIR; i++) expect((await create(attacker, wrongForTarget(i))).status).toBe(401);
      expect((await create(attacker, wrongForTarget(99))).status).toBe(429);
    }
    // 12 failures of the user name, 6 more than it gets for free: each check of it from an address that never signed
    // in with it waits first (capped at 0.5 s here), also the owner's first one from a new address.
    const owner = newClient();
    const started = performance.now();
    expect((await basicGet(owner, target)).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(450);
    // Another account is not slowed by this one's attack: asked at the same moment, it is answered first (a
    // comparison rather than a time limit, which a loaded machine could miss for scrypt alone). The owner's address
    // is known to the target from now on, so it is not slowed either; the other account's check is of a stranger.
    const answered: string[] = [];
    const stranger = newClient();
    const [owners, others] = await Promise.all([
      create(stranger, { ...target, password: 'still-a-guess' }).then((response) => (answered.push('target'), response)),
      create(stranger, NON_STAFF).then((response) => (answered.push('other'), response)),
    ]);
    expect([owners.status, others.status]).toEqual([401, 200]);
    expect(answered).toEqual(['other', 'target']);
  });

  test('parallel guesses from one client: exactly the limit is answered 401, the rest 429', async () => {
    const guesser = newClient();
    const statuses = (await times(MAX_FAILURES_PER_PAIR * 3, (i) => create(guesser, wrong(i)))).map((r) => r.status);
    expect(statuses.filter((status) => status === 401)).toHaveLength(MAX_FAILURES_PER_PAIR);
    expect(statuses.filter((status) => status === 429)).toHaveLength(MAX_FAILURES_PER_PAIR * 2);
  });

  test('a success forgets the mistakes of that client with that user name', async () => {
    const client = newClient();
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < MAX_FAILURES_PER_PAIR - 1; i++) expect((await create(client, wrong(i))).status).toBe(401);
      expect((await create(client, STAFF)).status).toBe(200);
    }
  });

  test('what is stored is hashed: neither the user names tried nor the client addresses appear', async () => {
    await upsertUser(app.db, { username: 'ziel', password: 'geheim-und-lang', isStaff: true });
    await create(newClient(), { username: 'my-password-typed-in-the-wrong-box', password: 'x' });
    const keys = (await app.db('login_failures').select('key')).map((row: { key: string }) => row.key);
    // The pair, the user name and the address's budget.
    expect(keys).toHaveLength(3);
    expect(keys.join(' ')).not.toMatch(/wrong-box|127\.0\./);
  });
});
