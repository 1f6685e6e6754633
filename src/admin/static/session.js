// The signed-in user: the tokens, their refresh, sign-in and sign-out, and what the server says about the user.

import { ApiError, send } from './http.js';

const TOKENS_KEY = 'webhook-admin.tokens';

const session = {
  /** `{access, refresh}` from POST /authentication/create, kept for the tab in sessionStorage. */
  tokens: null,
  refreshing: null,
};

/** GET /admin/api/info once signed in: user name, filter and form choices, Temporal UI address. */
export let info = null;

function storeTokens(tokens) {
  session.tokens = tokens;
  if (tokens) sessionStorage.setItem(TOKENS_KEY, JSON.stringify(tokens));
  else sessionStorage.removeItem(TOKENS_KEY);
}

/** Whether the tab kept tokens from before a reload. */
export function restoreTokens() {
  try {
    const stored = JSON.parse(sessionStorage.getItem(TOKENS_KEY) ?? 'null');
    if (stored && typeof stored.access === 'string' && typeof stored.refresh === 'string') session.tokens = stored;
  } catch {
    sessionStorage.removeItem(TOKENS_KEY);
  }
  return session.tokens !== null;
}

function authorization() {
  return session.tokens ? `Bearer ${session.tokens.access}` : null;
}

/**
 * Refresh tokens are rotated on use, so concurrent requests share one refresh instead of each spending the token.
 * @returns {Promise<void>}
 */
function refreshTokens() {
  session.refreshing ??= send('POST', '/authentication/refresh', { refresh: session.tokens.refresh })
    .then(storeTokens)
    .finally(() => (session.refreshing = null));
  return session.refreshing;
}

/** A call to the admin API as the signed-in user; an expired access token is refreshed once, transparently. */
export async function api(method, path, body) {
  const auth = authorization();
  if (!auth) throw new ApiError(401);
  try {
    return await send(method, path, body, auth);
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401 && session.tokens)) throw err;
    // Another request may have refreshed the tokens meanwhile; then only the retry is needed.
    if (authorization() === auth) {
      try {
        await refreshTokens();
      } catch {
        throw err;
      }
    }
    return send(method, path, body, authorization());
  }
}

export async function signIn(username, password) {
  storeTokens(await send('POST', '/authentication/create', { username, password }));
}

/** Asks who is signed in (and the choices the forms offer); a 403 for an account without staff permission. */
export async function loadInfo() {
  info = await api('GET', '/admin/api/info');
}

export function signOut() {
  const refresh = session.tokens && session.tokens.refresh;
  storeTokens(null);
  info = null;
  // Blocks the refresh token on the server; the page is signed out whatever the answer.
  if (refresh) send('POST', '/authentication/logout', { refresh }).catch(() => undefined);
}
