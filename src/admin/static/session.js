// The signed-in user: the tokens, their refresh, sign-in and sign-out, and what the server says about the user.
//
// Tabs share a session when one starts with a copy of the other's sessionStorage, which holds the session's id (a
// duplicated tab, a window the page opens, in some browsers a link opened in a new tab). Refresh tokens are rotated on use,
// and presenting one that was rotated already ends the whole session
// (docs/api.md#sessions-one-sign-in-and-the-refresh-tokens-rotated-from-it), so the tabs of a session must never each
// spend the token they hold. Hence the tokens live once, in token-store.js, under the session's id, and every request
// reads the newest ones there; a refresh runs under a Web Lock of the session, one tab (and one request) at a time, and
// first looks whether someone else has rotated the token in the meantime.
// docs/admin.md#tokens-and-tabs weighs where the tokens are kept.

import { ApiError, send } from './http.js';
import { deleteTokens, readTokens, storedSessions, writeTokens } from './token-store.js';

/** @import { AdminInfo, Tokens } from './api-types' */

const SESSION_KEY = 'webhook-admin.session';
const LOCK_PREFIX = 'webhook-admin.refresh:';
/** Held, shared, by every tab of a session while it is open: a stored session no tab holds is left over. */
const OPEN_PREFIX = 'webhook-admin.open:';

/** This tab's session: the key of its tokens in the store, kept in sessionStorage so that a reload keeps it. */
let sessionId = sessionStorage.getItem(SESSION_KEY);
/** @type {(() => void) | null} */
let releaseOpenLock = null;
/**
 * Without Web Locks (a page not served over HTTPS or from localhost) refreshes wait for each other in this tab only.
 * @type {Promise<unknown>}
 */
let tabQueue = Promise.resolve();

/**
 * GET /admin/api/info once signed in: user name, filter and form choices, Temporal UI address.
 * @type {AdminInfo | null}
 */
export let info = null;

/**
 * `task`, while no other tab or request of this session runs one.
 * @template T
 * @param {string} session
 * @param {() => Promise<T>} task
 * @returns {Promise<T>}
 */
function exclusively(session, task) {
  if (navigator.locks) return navigator.locks.request(`${LOCK_PREFIX}${session}`, task);
  const run = tabQueue.then(task);
  tabQueue = run.catch(() => undefined);
  return run;
}

/**
 * Marks the session open in this tab until it signs out (the browser releases the locks of a tab that closes).
 * @param {string} session
 */
function holdOpen(session) {
  if (!navigator.locks) return;
  // Released by signOut, also before the lock was granted (it then ends as soon as it begins).
  /** @type {Promise<void>} */
  const released = new Promise((release) => (releaseOpenLock = release));
  void navigator.locks.request(`${OPEN_PREFIX}${session}`, { mode: 'shared' }, () => released);
}

/**
 * Deletes the tokens of sessions no open tab holds: their tabs were closed without signing out. Done when someone
 * signs in, so that they stay on disk at most until the next sign-in in this browser (or expire before).
 */
async function forgetLeftOverSessions() {
  if (!navigator.locks) return;
  const { held = [], pending = [] } = await navigator.locks.query();
  const open = new Set([...held, ...pending].map((lock) => lock.name));
  for (const session of await storedSessions()) if (!open.has(`${OPEN_PREFIX}${session}`)) await deleteTokens(session);
}

/** Whether the tab was signed in before a reload, or started as a copy of a signed-in tab; it then keeps that session. */
export function resumeSession() {
  if (sessionId === null) return false;
  holdOpen(sessionId);
  return true;
}

/**
 * The session's tokens after `spent` was refused: rotated here, unless another tab or request of the session did it
 * while this one waited for the lock (then theirs). Undefined once the session was signed out.
 * @param {string} spent the refresh token
 * @returns {Promise<Tokens | undefined>}
 */
function refreshed(spent) {
  const session = sessionId;
  if (session === null) return Promise.resolve(undefined);
  return exclusively(session, async () => {
    const stored = await readTokens(session);
    if (!stored || stored.refresh !== spent) return stored;
    /** @type {Tokens} */
    const tokens = await send('POST', '/authentication/refresh', { refresh: spent });
    await writeTokens(session, tokens);
    return tokens;
  });
}

/**
 * A call to the admin API as the signed-in user; an expired access token is refreshed once, transparently.
 * @template T what the caller reads the answer as (see send)
 * @param {'GET' | 'POST' | 'PUT'} method
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<T>}
 */
export async function api(method, path, body) {
  const tokens = sessionId === null ? undefined : await readTokens(sessionId);
  if (!tokens) throw new ApiError(401);
  try {
    return await send(method, path, body, `Bearer ${tokens.access}`);
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) throw err;
    let fresh;
    try {
      fresh = await refreshed(tokens.refresh);
    } catch {
      throw err;
    }
    if (!fresh) throw err;
    return send(method, path, body, `Bearer ${fresh.access}`);
  }
}

/**
 * @param {string} username
 * @param {string} password
 */
export async function signIn(username, password) {
  /** @type {Tokens} */
  const tokens = await send('POST', '/authentication/create', { username, password });
  const session = Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
  await writeTokens(session, tokens);
  sessionId = session;
  sessionStorage.setItem(SESSION_KEY, session);
  holdOpen(session);
  await forgetLeftOverSessions();
}

/** Asks who is signed in (and the choices the forms offer); a 403 for an account without staff permission. */
export async function loadInfo() {
  info = await api('GET', '/admin/api/info');
}

/**
 * What the server said about the signed-in user, for what shows only while signed in. Signed out meanwhile (in a
 * request that raced this one), the answer is what the server would say: 401, and the router shows the sign-in form.
 * @returns {AdminInfo}
 */
export function signedInInfo() {
  if (!info) throw new ApiError(401);
  return info;
}

/** Signs the tab out at once; the session's other tabs notice at their next request. */
export function signOut() {
  const session = sessionId;
  sessionId = null;
  info = null;
  sessionStorage.removeItem(SESSION_KEY);
  releaseOpenLock?.();
  releaseOpenLock = null;
  if (session !== null) endSession(session).catch(() => undefined);
}

/**
 * Deletes the session's tokens and blocks its refresh token on the server; signed out whatever the answer.
 * @param {string} session
 */
async function endSession(session) {
  const tokens = await exclusively(session, async () => {
    const stored = await readTokens(session);
    await deleteTokens(session);
    return stored;
  });
  if (tokens) await send('POST', '/authentication/logout', { refresh: tokens.refresh });
}
