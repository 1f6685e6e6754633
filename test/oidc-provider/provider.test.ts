import { type ChildProcess } from 'node:child_process';
import { createHash, createPublicKey, randomBytes, verify, type JsonWebKey } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../src/shared/free-port';
import { eventually } from '../support/eventually';
import { rawExchange } from '../support/raw-http';
import { LoginSession, signInThrough } from '../support/login-session';
import { finished, spawnTypeScript } from '../support/typescript-process';

// The operators' OpenID Provider as its own process (oidc-provider is an ES module, which Jest's sandbox cannot
// load), over real HTTP, driven as a relying party would: discovery, the authorization code flow with PKCE, the
// login form, the token endpoint, the ID token's RS256 signature checked against the published keys.

const MAIN = path.join(__dirname, '../../src/oidc-provider/main.ts');
const CLIENT = { id: 'temporal-ui', secret: randomBytes(24).toString('base64url') };
const STAFF = { username: 'operator', password: randomBytes(18).toString('base64url') };
const REDIRECT_URI = 'http://127.0.0.1:9/auth/sso/callback';

let dir: string;
let issuer: string;
let provider: ChildProcess;
let log = '';

function environment(port: number): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    PORT: String(port),
    OIDC_ISSUER: `http://127.0.0.1:${port}`,
    OIDC_CLIENT_ID: CLIENT.id,
    OIDC_CLIENT_SECRET: CLIENT.secret,
    OIDC_REDIRECT_URI: REDIRECT_URI,
    OIDC_STAFF_USERNAME: STAFF.username,
    OIDC_STAFF_PASSWORD: STAFF.password,
    OIDC_SIGNING_KEY_FILE: path.join(dir, 'secrets', 'oidc-signing-key.json'),
  };
}

async function startProvider(): Promise<ChildProcess> {
  const port = await freePort();
  issuer = `http://127.0.0.1:${port}`;
  const child = spawnTypeScript(MAIN, [], environment(port));
  child.stdout?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
  await eventually(async () => (await fetch(`${issuer}/.well-known/openid-configuration`).catch(() => undefined))?.ok === true, {
    what: `the provider's discovery document; output:\n${log}`,
    timeoutMs: 30_000,
  });
  return child;
}

async function stopProvider(child: ChildProcess): Promise<void> {
  const done = finished(child);
  child.kill('SIGTERM');
  await done;
}

const base64url = (bytes: Buffer) => bytes.toString('base64url');

/** The authorization request of a confidential client using PKCE (S256), with its verifier, state and nonce. */
function authorizationRequest(overrides: Record<string, string> = {}) {
  const verifier = base64url(randomBytes(32));
  const params = {
    client_id: CLIENT.id,
    redirect_uri: REDIRECT_URI,
    response_type: 'code',
    scope: 'openid profile email',
    state: base64url(randomBytes(12)),
    nonce: base64url(randomBytes(12)),
    code_challenge: base64url(createHash('sha256').update(verifier).digest()),
    code_challenge_method: 'S256',
    ...overrides,
  };
  return { url: `${issuer}/auth?${new URLSearchParams(params).toString()}`, verifier, params };
}

const atRedirectUri = (url: string) => url.startsWith(REDIRECT_URI);

function token(code: string, verifier: string, secret = CLIENT.secret): Promise<Response> {
  return fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${CLIENT.id}:${secret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, code_verifier: verifier }).toString(),
  });
}

/** The claims of a compact JWS, once its RS256 signature checks out against one of the provider's published keys. */
async function verifiedClaims(jwt: string): Promise<Record<string, unknown>> {
  const [header, payload, signature] = jwt.split('.');
  const { alg, kid } = JSON.parse(Buffer.from(header, 'base64url').toString()) as { alg: string; kid: string };
  expect(alg).toBe('RS256');
  const { keys } = (await (await fetch(`${issuer}/jwks`)).json()) as { keys: JsonWebKey[] };
  const key = keys.find((candidate) => candidate.kid === kid);
  expect(key).toBeDefined();
  const valid = verify('sha256', Buffer.from(`${header}.${payload}`), createPublicKey({ key: key!, format: 'jwk' }), Buffer.from(signature, 'base64url'));
  expect(valid).toBe(true);
  return JSON.parse(Buffer.from(payload, 'base64url').toString()) as Record<string, unknown>;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'oidc-provider-'));
  provider = await startProvider();
}, 60_000);

afterAll(async () => {
  if (provider) await stopProvider(provider);
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('publishes discovery for the code flow with S256 PKCE and RS256 ID tokens, and only the public half of its key', async () => {
  const discovery = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as Record<string, unknown>;
  expect(discovery).toMatchObject({
    issuer,
    authorization_endpoint: `${issuer}/auth`,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/jwks`,
    response_types_supported: ['code'],
    code_challenge_methods_supported: ['S256'],
    id_token_signing_alg_values_supported: ['RS256'],
  });
  const { keys } = (await (await fetch(`${issuer}/jwks`)).json()) as { keys: JsonWebKey[] };
  expect(keys).toHaveLength(1);
  expect(Object.keys(keys[0]).sort()).toEqual(['alg', 'e', 'kid', 'kty', 'n', 'use']);
  // The private key lives in its file, readable by its owner alone.
  expect((await stat(path.join(dir, 'secrets', 'oidc-signing-key.json'))).mode & 0o077).toBe(0);
});

test('signs the staff user in with the code flow and PKCE: a signed ID token for the client, with the nonce', async () => {
  const session = new LoginSession();
  const request = authorizationRequest();
  const refused = await signInThrough(session, request.url, { ...STAFF, password: `${STAFF.password}x` }, atRedirectUri);
  expect(refused.response.status).toBe(401);
  expect(await refused.response.text()).toContain('wrong password');
  // The form that takes the password is not to be framed by another site.
  expect(refused.response.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  expect(refused.response.headers.get('x-frame-options')).toBe('DENY');

  const page = await signInThrough(session, request.url, STAFF, atRedirectUri);
  const callback = new URL(page.url);
  expect(callback.searchParams.get('state')).toBe(request.params.state);
  expect(callback.searchParams.get('iss')).toBe(issuer);
  const code = callback.searchParams.get('code')!;

  const answer = await token(code, request.verifier);
  expect(answer.status).toBe(200);
  const tokens = (await answer.json()) as { id_token: string; access_token: string; token_type: string };
  expect(tokens.token_type).toBe('Bearer');
  const claims = await verifiedClaims(tokens.id_token);
  expect(claims).toMatchObject({ iss: issuer, aud: CLIENT.id, sub: STAFF.username, nonce: request.params.nonce, name: STAFF.username });
  // The code is spent.
  expect((await token(code, request.verifier)).status).toBe(400);
});

test('refuses a code without the PKCE verifier it was issued for, with a wrong client secret, or for another redirect URI', async () => {
  const session = new LoginSession();
  const first = authorizationRequest();
  const code = new URL((await signInThrough(session, first.url, STAFF, atRedirectUri)).url).searchParams.get('code')!;
  const wrongVerifier = await token(code, base64url(randomBytes(32)));
  expect(wrongVerifier.status).toBe(400);
  expect(await wrongVerifier.json()).toMatchObject({ error: 'invalid_grant' });

  // Signed in already: the provider answers with a code at once.
  const second = authorizationRequest();
  const again = await session.follow(second.url, {}, atRedirectUri);
  const secondCode = new URL(again.url).searchParams.get('code')!;
  expect((await token(secondCode, second.verifier, 'not-the-secret')).status).toBe(401);

  for (const redirect_uri of ['http://127.0.0.1:9/auth/sso/callback/', 'http://attacker.example/auth/sso/callback']) {
    const elsewhere = await new LoginSession().follow(authorizationRequest({ redirect_uri }).url);
    expect([redirect_uri, elsewhere.response.status]).toEqual([redirect_uri, 400]);
    expect(elsewhere.response.headers.get('location')).toBeNull();
  }
});

test('names only its issuer in its endpoints whatever Host a request says, and lets no page of it be framed', async () => {
  const answer = await rawExchange(issuer, `GET /.well-known/openid-configuration HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`);
  expect(answer.status).toBe(200);
  const discovery = JSON.parse(answer.body) as Record<string, unknown>;
  const urls = Object.values(discovery).filter((value): value is string => typeof value === 'string' && value.startsWith('http'));
  expect(urls.length).toBeGreaterThan(3);
  for (const url of urls) expect([url, new URL(url).origin]).toEqual([url, issuer]);
  for (const page of ['/.well-known/openid-configuration', '/session/end', '/jwks']) {
    const response = await fetch(`${issuer}${page}`);
    expect([page, response.headers.get('x-frame-options'), response.headers.get('content-security-policy')]).toEqual([page, 'DENY', expect.stringContaining("frame-ancestors 'none'")]);
  }
});

test('keeps its signing key across a restart, so that the ID tokens issued before stay valid', async () => {
  const keyFile = path.join(dir, 'secrets', 'oidc-signing-key.json');
  const before = await readFile(keyFile, 'utf8');
  await stopProvider(provider);
  provider = await startProvider();
  expect(await readFile(keyFile, 'utf8')).toBe(before);
  const { keys } = (await (await fetch(`${issuer}/jwks`)).json()) as { keys: Array<{ kid: string }> };
  expect(keys.map((key) => key.kid)).toEqual([(JSON.parse(before) as { kid: string }).kid]);
}, 60_000);

test('answers a login form it cannot use with a 4xx, never a 500', async () => {
  expect((await fetch(`${issuer}/interaction/unknown`)).status).toBe(400);
  expect((await fetch(`${issuer}/interaction/unknown/login`, { method: 'POST', body: new URLSearchParams(STAFF) })).status).toBe(400);
  const session = new LoginSession();
  const form = await session.follow(authorizationRequest().url);
  const action = `${form.url}/login`;
  expect((await session.request(action)).status).toBe(405);
  const post = (body: string, type: string) => session.request(action, { method: 'POST', headers: { 'content-type': type }, body });
  expect((await post(JSON.stringify(STAFF), 'application/json')).status).toBe(415);
  expect((await post(`username=${'a'.repeat(20_000)}`, 'application/x-www-form-urlencoded')).status).toBe(413);
  // The form comes back with what was typed, escaped.
  const hostile = await post(new URLSearchParams({ username: '"><script>alert(1)</script>', password: 'x' }).toString(), 'application/x-www-form-urlencoded');
  expect(hostile.status).toBe(401);
  expect(await hostile.text()).toContain('value="&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"');
});
