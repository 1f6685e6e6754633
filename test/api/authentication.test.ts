import jwt from 'jsonwebtoken';
import { loadConfig } from '../../src/config';
import { createDb } from '../../src/db/knex';
import { setActive, setPassword, setStaff, upsertUser } from '../../src/auth/accounts';
import { PRODUCTION_ENV } from '../support/production-env';
import { type DocumentedResponses, documentedResponses } from '../support/documented-responses';
import { basicAuth, bearer, NON_STAFF, STAFF, startTestApp, TEST_JWT_SECRET, type TestApp } from '../support/test-app';

let app: TestApp;
let documented: DocumentedResponses;

const CRM_PATH = '/api/v2.1/crm/contacts/';

beforeAll(async () => {
  app = await startTestApp();
  documented = await documentedResponses(app.baseUrl);
});

afterAll(async () => {
  await app?.close();
});

async function createTokens(credentials: { username: string; password: string }) {
  const response = await app.anonymous.post('/authentication/create', credentials);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { access: string; refresh: string };
  expect(documented.errors('post', '/authentication/create', 200, body)).toEqual([]);
  return body;
}

async function expectError(response: Response, status: number, code: string, documentedAt?: [string, string]) {
  expect(response.status).toBe(status);
  const body = (await response.json()) as { error: string; problems?: unknown };
  expect(body).toEqual({ error: expect.any(String), code, ...(body.problems ? { problems: expect.any(Array) } : {}) });
  if (documentedAt) expect(documented.errors(documentedAt[0] as 'get' | 'post', documentedAt[1], status, body)).toEqual([]);
  return body as { error: string };
}

describe('POST /authentication/create', () => {
  test('gives an access token for 5 minutes and a refresh token for 1 day', async () => {
    const { access, refresh } = await createTokens(STAFF);
    const accessClaims = jwt.decode(access) as Record<string, number | string>;
    const refreshClaims = jwt.decode(refresh) as Record<string, number | string>;
    expect(jwt.decode(access, { complete: true })!.header).toEqual({ alg: 'HS256', typ: 'JWT', kid: expect.any(String) });
    expect(accessClaims).toEqual({
      token_type: 'access',
      user_id: expect.any(Number),
      token_version: 1,
      sid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      auth_time: app.clock.now,
      jti: expect.any(String),
      iat: app.clock.now,
      exp: app.clock.now + 300,
    });
    expect(refreshClaims).toMatchObject({ token_type: 'refresh', sid: accessClaims.sid, auth_time: app.clock.now, exp: app.clock.now + 86_400 });
    expect((await app.get(CRM_PATH, bearer(access))).status).toBe(200);
  });

  test('wrong password, unknown or inactive user: 401 with a challenge', async () => {
    await upsertUser(app.db, { username: 'ausgetreten', password: 'Pilatus-2132', isStaff: true });
    await app.db('users').where({ username: 'ausgetreten' }).update({ is_active: false });
    for (const credentials of [
      { username: STAFF.username, password: 'falsch' },
      { username: 'niemand', password: STAFF.password },
      { username: 'ausgetreten', password: 'Pilatus-2132' },
      { username: 'nul\u0000byte', password: STAFF.password },
    ]) {
      const response = await app.anonymous.post('/authentication/create', credentials);
      await expectError(response, 401, 'authentication_failed', ['post', '/authentication/create']);
      expect(response.headers.get('www-authenticate')).toBe('Bearer realm="api"');
    }
  });

  test('missing fields are a 400, malformed JSON a 400, another content type a 415', async () => {
    const missing = await expectError(await app.anonymous.post('/authentication/create', { username: STAFF.username }), 400, 'invalid_body', [
      'post',
      '/authentication/create',
    ]);
    expect(missing.error).toBe('password: is required');
    await expectError(await app.anonymous.post('/authentication/create', { username: 7, password: 'x' }), 400, 'invalid_body');
    await expectError(await app.anonymous.post('/authentication/create', '[]'), 400, 'invalid_body');
    await expectError(await app.anonymous.post('/authentication/create', ''), 400, 'invalid_body');
    for (const body of ['{"username": ', '"just a string"']) {
      const malformed = await expectError(await app.anonymous.post('/authentication/create', body), 400, 'malformed_json');
      expect(malformed.error).toBe('Malformed JSON body');
    }
    const long = await app.anonymous.post('/authentication/create', { username: 'x'.repeat(20_000), password: 'y' });
    expect((await expectError(long, 400, 'invalid_body')).error).toBe('username: is too long');
    const huge = await app.anonymous.post('/authentication/create', { username: 'x'.repeat(1_100_000), password: 'y' });
    await expectError(huge, 413, 'payload_too_large', ['post', '/authentication/create']);
    const form = await fetch(`${app.baseUrl}/authentication/create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: `username=${STAFF.username}&password=x`,
    });
    await expectError(form, 415, 'unsupported_media_type', ['post', '/authentication/create']);
    await expectError(await fetch(`${app.baseUrl}/authentication/create`), 405, 'method_not_allowed');
  });
});

describe('Bearer and Basic on the CRM endpoints', () => {
  test('no credentials: 401 with the Bearer challenge (Basic is accepted, not offered)', async () => {
    const response = await fetch(`${app.baseUrl}${CRM_PATH}`);
    await expectError(response, 401, 'not_authenticated', ['get', CRM_PATH]);
    expect(response.headers.get('www-authenticate')).toBe('Bearer realm="api"');
  });

  test('an active account without staff permission gets tokens, then 403', async () => {
    const { access } = await createTokens(NON_STAFF);
    await expectError(await app.get(CRM_PATH, bearer(access)), 403, 'permission_denied', ['get', CRM_PATH]);
    await expectError(
      await app.get(CRM_PATH, { Authorization: basicAuth(NON_STAFF.username, NON_STAFF.password) }),
      403,
      'permission_denied',
    );
  });

  test('Basic with a staff account works; wrong or malformed credentials are a 401', async () => {
    const ok = await app.get(CRM_PATH, { Authorization: basicAuth(STAFF.username, STAFF.password) });
    expect(ok.status).toBe(200);
    for (const header of [
      basicAuth(STAFF.username, 'falsch'),
      basicAuth('nul\u0000byte', STAFF.password),
      'Basic !!!not-base64!!!',
      'Basic',
      `Basic ${Buffer.from('ohne-doppelpunkt').toString('base64')}`,
      'Digest username="crm-sync"',
      'Bearer',
      'Bearer a b',
    ]) {
      await expectError(await app.get(CRM_PATH, { Authorization: header }), 401, 'not_authenticated');
    }
  });

  test('credentials are UTF-8, in a token request and in Basic', async () => {
    const swiss = { username: 'crm-sync', password: 'Zürisee-2025!' };
    await upsertUser(app.db, { ...swiss, isStaff: true });
    expect((await app.get(CRM_PATH, bearer((await createTokens(swiss)).access))).status).toBe(200);
    expect((await app.get(CRM_PATH, { Authorization: basicAuth(swiss.username, swiss.password) })).status).toBe(200);
  });

  test('tokens that are forged, of the wrong type or signed with "none" are a 401', async () => {
    const { refresh } = await createTokens(STAFF);
    const claims = jwt.decode(refresh) as Record<string, unknown>;
    const forged = jwt.sign({ ...claims, token_type: 'access' }, 'a-different-secret-of-enough-length-0123456789');
    const unsigned = jwt.sign({ ...claims, token_type: 'access' }, '', { algorithm: 'none' });
    for (const token of ['garbage', refresh, forged, unsigned]) {
      await expectError(await app.get(CRM_PATH, bearer(token)), 401, 'token_not_valid', ['get', CRM_PATH]);
    }
  });

  test('an access token expires after 5 minutes by the app clock', async () => {
    const { access } = await createTokens(STAFF);
    const issuedAt = app.clock.now;
    try {
      app.clock.now = issuedAt + 299;
      expect((await app.get(CRM_PATH, bearer(access))).status).toBe(200);
      app.clock.now = issuedAt + 301;
      await expectError(await app.get(CRM_PATH, bearer(access)), 401, 'token_not_valid');
    } finally {
      app.clock.now = issuedAt;
    }
  });

  test('a deactivated account loses access at once, tokens or not', async () => {
    await upsertUser(app.db, { username: 'praktikum', password: 'Eiger-3967-m', isStaff: true });
    const { access } = await createTokens({ username: 'praktikum', password: 'Eiger-3967-m' });
    await app.db('users').where({ username: 'praktikum' }).update({ is_active: false });
    await expectError(await app.get(CRM_PATH, bearer(access)), 401, 'not_authenticated');
    await expectError(
      await app.get(CRM_PATH, { Authorization: basicAuth('praktikum', 'Eiger-3967-m') }),
      401,
      'not_authenticated',
    );
  });
});

describe('refresh, verify and logout', () => {
  test('refresh rotates: a new pair, the old refresh token blocked, the new one usable', async () => {
    const first = await createTokens(STAFF);
    const rotated = await app.anonymous.post('/authentication/refresh', { refresh: first.refresh });
    expect(rotated.status).toBe(200);
    const second = (await rotated.json()) as { access: string; refresh: string };
    expect(documented.errors('post', '/authentication/refresh', 200, second)).toEqual([]);
    expect(second.refresh).not.toBe(first.refresh);
    expect((await app.get(CRM_PATH, bearer(second.access))).status).toBe(200);

    expect((await app.anonymous.post('/authentication/refresh', { refresh: second.refresh })).status).toBe(200);
    // The first one again: refused (and its session ends, below).
    await expectError(await app.anonymous.post('/authentication/refresh', { refresh: first.refresh }), 401, 'token_not_valid', [
      'post',
      '/authentication/refresh',
    ]);
  });

  test('two concurrent uses of one refresh token: exactly one succeeds', async () => {
    const { refresh } = await createTokens(STAFF);
    const statuses = await Promise.all(
      Array.from({ length: 5 }, () => app.anonymous.post('/authentication/refresh', { refresh }).then((r) => r.status)),
    );
    expect(statuses.sort((a, b) => a - b)).toEqual([200, 401, 401, 401, 401]);
  });

  const refresh = (token: string) => app.anonymous.post('/authentication/refresh', { refresh: token });
  const pairOf = async (response: Response) => {
    expect(response.status).toBe(200);
    return (await response.json()) as { access: string; refresh: string };
  };

  test('presenting a rotated refresh token again ends its whole session; the user’s other sessions go on', async () => {
    const [session, other] = [await createTokens(STAFF), await createTokens(STAFF)];
    const second = await pairOf(await refresh(session.refresh));
    const third = await pairOf(await refresh(second.refresh));
    // The thief (or the owner) presents a token that was rotated already: 401, and the session ends.
    await expectError(await refresh(session.refresh), 401, 'token_not_valid');
    const ended = await expectError(await refresh(third.refresh), 401, 'token_not_valid');
    expect(ended.error).toBe('Session ended; sign in again');
    await expectError(await app.anonymous.post('/authentication/verify', { token: third.refresh }), 401, 'token_not_valid');
    await expectError(await app.anonymous.post('/authentication/logout', { refresh: third.refresh }), 401, 'token_not_valid');
    // Its access tokens are not checked against ended sessions: they run out within 5 minutes, as after a logout.
    expect((await app.get(CRM_PATH, bearer(third.access))).status).toBe(200);
    expect((await refresh(other.refresh)).status).toBe(200);
    expect(await app.db('ended_sessions').where({ session_id: (jwt.decode(third.refresh) as { sid: string }).sid }).first()).toMatchObject({
      reason: 'refresh_token_reused',
    });
  });

  test('two parallel refreshes of one token: exactly one wins, and the session ends, so its new token is refused', async () => {
    const { refresh: token } = await createTokens(STAFF);
    const answers = await Promise.all([refresh(token), refresh(token)]);
    expect(answers.map((answer) => answer.status).sort((a, b) => a - b)).toEqual([200, 401]);
    const winner = await pairOf(answers.find((answer) => answer.status === 200)!);
    await expectError(await refresh(winner.refresh), 401, 'token_not_valid');
  });

  test('a logout ends the session; a logout with a rotated token ends it too', async () => {
    const first = await createTokens(STAFF);
    const second = await pairOf(await refresh(first.refresh));
    await expectError(await app.anonymous.post('/authentication/logout', { refresh: first.refresh }), 401, 'token_not_valid');
    await expectError(await refresh(second.refresh), 401, 'token_not_valid');

    const other = await createTokens(STAFF);
    expect((await app.anonymous.post('/authentication/logout', { refresh: other.refresh })).status).toBe(200);
    expect(await app.db('ended_sessions').where({ session_id: (jwt.decode(other.refresh) as { sid: string }).sid }).first()).toMatchObject({
      reason: 'logout',
    });
  });

  test('a session lasts at most SESSION_MAX_DAYS (30) from its sign-in, however often it is refreshed', async () => {
    const signedInAt = app.clock.now;
    const sessionEnd = signedInAt + 30 * 86_400;
    let pair = await createTokens(STAFF);
    try {
      // Refreshed every 23 hours, each refresh token within its day.
      while (app.clock.now + 23 * 3600 < sessionEnd) {
        app.clock.now += 23 * 3600;
        pair = await pairOf(await refresh(pair.refresh));
        expect(jwt.decode(pair.refresh)).toMatchObject({ auth_time: signedInAt, exp: Math.min(app.clock.now + 86_400, sessionEnd) });
      }
      expect(jwt.decode(pair.access)).toMatchObject({ exp: Math.min(app.clock.now + 300, sessionEnd) });
      app.clock.now = sessionEnd - 1;
      pair = await pairOf(await refresh(pair.refresh));
      expect(jwt.decode(pair.refresh)).toMatchObject({ exp: sessionEnd });
      expect(jwt.decode(pair.access)).toMatchObject({ exp: sessionEnd });
      app.clock.now = sessionEnd;
      await expectError(await refresh(pair.refresh), 401, 'token_not_valid');
      // A new sign-in is a new session.
      expect((await refresh((await createTokens(STAFF)).refresh)).status).toBe(200);
    } finally {
      app.clock.now = signedInAt;
    }
  });

  test('a shorter SESSION_MAX_DAYS applies to sessions that began before the change', async () => {
    // A second process on the same database and key, restarted with one day.
    const shorter = await startTestApp({ SESSION_MAX_DAYS: '1' }, { connect: () => createDb({ connectionString: app.databaseUrl }) });
    const signedInAt = app.clock.now;
    try {
      const first = await createTokens(STAFF);
      app.clock.now = signedInAt + 20 * 3600;
      const second = await pairOf(await refresh(first.refresh));
      shorter.clock.now = signedInAt + 25 * 3600;
      const expired = await expectError(await shorter.anonymous.post('/authentication/refresh', { refresh: second.refresh }), 401, 'token_not_valid');
      expect(expired.error).toBe('Session expired; sign in again');
    } finally {
      app.clock.now = signedInAt;
      await shorter.close();
    }
  });

  test('a refresh token from before sessions were tracked is a session of its own, begun when it was issued', async () => {
    const { refresh: current } = await createTokens(STAFF);
    const { sid: _sid, auth_time: _authTime, ...legacyClaims } = jwt.decode(current) as Record<string, unknown>;
    const { kid } = jwt.decode(current, { complete: true })!.header;
    const legacy = jwt.sign({ ...legacyClaims, jti: '0f6c2a52-5a43-4c51-9a55-0d7e8b0b7a11' }, TEST_JWT_SECRET, { keyid: kid });
    const rotated = await pairOf(await refresh(legacy));
    expect(jwt.decode(rotated.refresh)).toMatchObject({ sid: '0f6c2a52-5a43-4c51-9a55-0d7e8b0b7a11', auth_time: legacyClaims.iat });
    await expectError(await refresh(legacy), 401, 'token_not_valid');
    await expectError(await refresh(rotated.refresh), 401, 'token_not_valid');
  });

  test('an access token is not a refresh token, and a refresh token expires after a day', async () => {
    const { access, refresh } = await createTokens(STAFF);
    await expectError(await app.anonymous.post('/authentication/refresh', { refresh: access }), 401, 'token_not_valid');
    const issuedAt = app.clock.now;
    try {
      app.clock.now = issuedAt + 86_401;
      await expectError(await app.anonymous.post('/authentication/refresh', { refresh }), 401, 'token_not_valid');
    } finally {
      app.clock.now = issuedAt;
    }
  });

  test('verify: 200 {} for a valid access or refresh token, 401 otherwise', async () => {
    const { access, refresh } = await createTokens(STAFF);
    for (const token of [access, refresh]) {
      const response = await app.anonymous.post('/authentication/verify', { token });
      expect(response.status).toBe(200);
      const body = await response.json();
      expect(body).toEqual({});
      expect(documented.errors('post', '/authentication/verify', 200, body)).toEqual([]);
    }
    await expectError(await app.anonymous.post('/authentication/verify', { token: 'garbage' }), 401, 'token_not_valid', [
      'post',
      '/authentication/verify',
    ]);
    await expectError(await app.anonymous.post('/authentication/verify', {}), 400, 'invalid_body');
    const issuedAt = app.clock.now;
    try {
      app.clock.now = issuedAt + 301;
      await expectError(await app.anonymous.post('/authentication/verify', { token: access }), 401, 'token_not_valid');
      expect((await app.anonymous.post('/authentication/verify', { token: refresh })).status).toBe(200);
    } finally {
      app.clock.now = issuedAt;
    }
  });

  test('logout blocks the refresh token for refresh, verify and a second logout', async () => {
    const { refresh } = await createTokens(STAFF);
    const response = await app.anonymous.post('/authentication/logout', { refresh });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body).toEqual({});
    expect(documented.errors('post', '/authentication/logout', 200, body)).toEqual([]);
    await expectError(await app.anonymous.post('/authentication/refresh', { refresh }), 401, 'token_not_valid');
    await expectError(await app.anonymous.post('/authentication/verify', { token: refresh }), 401, 'token_not_valid');
    await expectError(await app.anonymous.post('/authentication/logout', { refresh }), 401, 'token_not_valid', [
      'post',
      '/authentication/logout',
    ]);
  });

  test('blocked tokens are forgotten once they would have expired anyway', async () => {
    const { refresh } = await createTokens(STAFF);
    const { jti } = jwt.decode(refresh) as { jti: string };
    expect((await app.anonymous.post('/authentication/logout', { refresh })).status).toBe(200);
    expect(await app.db('refresh_token_blacklist').where({ jti }).first()).toBeDefined();
    const issuedAt = app.clock.now;
    try {
      app.clock.now = issuedAt + 86_401;
      const fresh = await createTokens(STAFF);
      expect((await app.anonymous.post('/authentication/logout', { refresh: fresh.refresh })).status).toBe(200);
      expect(await app.db('refresh_token_blacklist').where({ jti }).first()).toBeUndefined();
    } finally {
      app.clock.now = issuedAt;
    }
  });
});

describe('a password change, deactivation or demotion ends every session at once', () => {
  const HOLDER = { username: 'sitzung', password: 'Titlis-3238-m' };
  let session: { access: string; refresh: string };
  let issuedAt: number;

  beforeEach(async () => {
    await upsertUser(app.db, { ...HOLDER, isStaff: true });
    session = await createTokens(HOLDER);
    issuedAt = app.clock.now;
  });
  afterEach(() => {
    app.clock.now = issuedAt;
  });

  /**
   * Every use of the session's tokens, one minute after they were issued: long before either expires. On the CRM
   * endpoints a deactivated account is `not_authenticated`, whatever its token.
   */
  async function expectSessionEnded(bearerCode = 'token_not_valid') {
    app.clock.now = issuedAt + 60;
    await expectError(await app.get(CRM_PATH, bearer(session.access)), 401, bearerCode, ['get', CRM_PATH]);
    await expectError(await app.anonymous.post('/authentication/refresh', { refresh: session.refresh }), 401, 'token_not_valid');
    for (const token of [session.access, session.refresh]) {
      await expectError(await app.anonymous.post('/authentication/verify', { token }), 401, 'token_not_valid');
    }
    await expectError(await app.anonymous.post('/authentication/logout', { refresh: session.refresh }), 401, 'token_not_valid');
  }

  test('the session holds until then', async () => {
    app.clock.now = issuedAt + 60;
    expect((await app.get(CRM_PATH, bearer(session.access))).status).toBe(200);
    expect((await app.anonymous.post('/authentication/verify', { token: session.access })).status).toBe(200);
    expect((await app.anonymous.post('/authentication/refresh', { refresh: session.refresh })).status).toBe(200);
  });

  test('a password change: the old tokens and the old password are refused, the new password signs in', async () => {
    await setPassword(app.db, HOLDER.username, 'Brienzer-Rothorn-2350');
    await expectSessionEnded();
    await expectError(await app.anonymous.post('/authentication/create', HOLDER), 401, 'authentication_failed');
    const fresh = await createTokens({ username: HOLDER.username, password: 'Brienzer-Rothorn-2350' });
    expect((await app.get(CRM_PATH, bearer(fresh.access))).status).toBe(200);
  });

  test('a deactivation; activating again does not bring the old session back', async () => {
    await setActive(app.db, HOLDER.username, false);
    await expectSessionEnded('not_authenticated');
    await setActive(app.db, HOLDER.username, true);
    await expectSessionEnded();
    expect((await app.get(CRM_PATH, { Authorization: basicAuth(HOLDER.username, HOLDER.password) })).status).toBe(200);
  });

  test('a demotion: the old token is refused, not merely forbidden; promotion ends nothing', async () => {
    await setStaff(app.db, HOLDER.username, false);
    await expectSessionEnded();
    const demoted = await createTokens(HOLDER);
    await expectError(await app.get(CRM_PATH, bearer(demoted.access)), 403, 'permission_denied');
    await setStaff(app.db, HOLDER.username, true);
    expect((await app.get(CRM_PATH, bearer(demoted.access))).status).toBe(200);
    expect((await app.anonymous.post('/authentication/refresh', { refresh: demoted.refresh })).status).toBe(200);
  });
});

test('production refuses to start without a signing secret', () => {
  expect(() => loadConfig({ NODE_ENV: 'production', DATABASE_URL: 'postgres://db.internal/app' })).toThrow(/JWT_SECRETS \(or JWT_SECRET\) is required/);
  expect(() => loadConfig({ NODE_ENV: 'production', JWT_SECRETS: ' , ' })).toThrow(/JWT_SECRETS \(or JWT_SECRET\) is required/);
  expect(loadConfig({ ...PRODUCTION_ENV, JWT_SECRET: 'another-secret-of-thirty-two-chars' }).auth.jwtSecrets).toEqual(['another-secret-of-thirty-two-chars']);
});
