import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import Provider, { type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import getRawBody from 'raw-body';
import type { Logger } from '../logger';
import { loginPage } from './login-page';
import type { ProviderSettings } from './settings';
import type { SigningKey } from './signing-key';

/**
 * The OpenID Provider of the operators' tools: one confidential client (the Temporal UI) with its one redirect URI,
 * one staff account, the authorization code flow (PKCE verified whenever the client sends a challenge, required of
 * public clients), discovery, and ID tokens signed RS256 with the persisted key. State (sessions, codes, grants)
 * lives in this process: a restart asks operators to sign in again, and the tokens already issued stay valid (the
 * key is kept).
 */

const sha256 = (text: string) => createHash('sha256').update(text).digest();
/** Compares hashes, so that neither the length nor the content of the expected value shows in the time taken. */
const sameSecret = (given: string, expected: string) => timingSafeEqual(sha256(given), sha256(expected));

/** A login form is a few hundred bytes: anything much longer is not one. */
const FORM_LIMIT = '8kb';

const SCOPES = ['openid', 'profile', 'email'];

export function operatorProvider(settings: ProviderSettings, signingKey: SigningKey, log: Logger): Provider {
  const { staff, client } = settings;
  const configuration: Configuration = {
    clients: [
      {
        client_id: client.id,
        client_secret: client.secret,
        redirect_uris: [client.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
        id_token_signed_response_alg: 'RS256',
      },
    ],
    jwks: { keys: [signingKey] },
    scopes: SCOPES,
    claims: { openid: ['sub'], profile: ['name', 'preferred_username'], email: ['email'] },
    // The Temporal UI shows who is signed in from the ID token alone.
    conformIdTokenClaims: false,
    findAccount: (_ctx, id) =>
      id === staff.username
        ? { accountId: id, claims: () => ({ sub: id, name: id, preferred_username: id }) }
        : undefined,
    responseTypes: ['code'],
    features: { devInteractions: { enabled: false } },
    // Random per start: they sign only the short-lived interaction and session cookies kept in this process anyway.
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    ttl: { AccessToken: 3600, AuthorizationCode: 60, IdToken: 3600, Interaction: 600, Session: 8 * 3600, Grant: 8 * 3600 },
    renderError: (ctx, out) => {
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = `${out.error}: ${out.error_description ?? ''}\n`;
    },
  };
  const provider = new Provider(settings.issuer, configuration);
  provider.on('server_error', (_ctx: unknown, err: Error) => log.error({ err }, 'oidc-provider error'));

  /** Finishes the interaction signed in as the staff account, with the scopes the client asked for granted. */
  async function signIn(ctx: KoaContextWithOIDC, clientId: string, scope: string): Promise<void> {
    const grant = new provider.Grant({ accountId: staff.username, clientId });
    grant.addOIDCScope(scope.split(' ').filter((name) => SCOPES.includes(name)));
    const grantId = await grant.save();
    const target = await provider.interactionResult(ctx.req, ctx.res, { login: { accountId: staff.username }, consent: { grantId } });
    ctx.status = 303;
    ctx.redirect(target);
  }

  // The library builds its endpoints' URLs (discovery, form actions) from the request's Host: pinned to the issuer's,
  // so that no request can make it name another server. No page of it may be framed by another site.
  const issuerHost = new URL(settings.issuer).host;
  provider.use(async (ctx, next) => {
    ctx.req.headers.host = issuerHost;
    await next();
    ctx.set('X-Frame-Options', 'DENY');
    if (!ctx.response.get('Content-Security-Policy')) ctx.set('Content-Security-Policy', "frame-ancestors 'none'");
  });

  provider.use(async (ctx, next) => {
    const match = /^\/interaction\/([\w-]+)(\/login)?$/.exec(ctx.path);
    if (!match) return next();
    const details = await provider.interactionDetails(ctx.req, ctx.res);
    if (details.uid !== match[1]) ctx.throw(400, 'interaction mismatch');
    const clientId = String(details.params.client_id);
    const action = `/interaction/${details.uid}/login`;
    ctx.set('Cache-Control', 'no-store');
    // The page that takes the password runs nothing but its own style.
    ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'");
    ctx.type = 'text/html; charset=utf-8';
    if (ctx.method === 'GET' && !match[2]) {
      // Already signed in (a second client, or consent alone): the one client is first party, nothing to ask.
      if (details.prompt.name === 'consent' && details.session?.accountId === staff.username) {
        return signIn(ctx as KoaContextWithOIDC, clientId, String(details.params.scope));
      }
      ctx.body = loginPage({ action, clientId });
      return;
    }
    if (ctx.method !== 'POST' || !match[2]) ctx.throw(405);
    if (!ctx.is('application/x-www-form-urlencoded')) ctx.throw(415);
    const form = new URLSearchParams(await getRawBody(ctx.req, { limit: FORM_LIMIT, encoding: 'utf8' }));
    const username = form.get('username') ?? '';
    const password = form.get('password') ?? '';
    // Both compared whatever the first gives, so that the time does not tell a known username.
    const usernameMatches = sameSecret(username, staff.username);
    const passwordMatches = sameSecret(password, staff.password);
    if (!(usernameMatches && passwordMatches)) {
      log.warn({ username: username.slice(0, 100), client: clientId }, 'operator login refused');
      ctx.status = 401;
      ctx.body = loginPage({ action, clientId, username, error: 'Unknown username or wrong password.' });
      return;
    }
    log.info({ username, client: clientId }, 'operator signed in');
    return signIn(ctx as KoaContextWithOIDC, clientId, String(details.params.scope));
  });
  return provider;
}
