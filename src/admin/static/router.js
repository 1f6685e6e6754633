// The address says what the page shows: #/events?status=&event=&transaction_id=…&page=, #/events/<id>,
// #/health?window=, #/recovery, #/recovery/<id>, #/endpoint. Each render takes a ticket; an answer that arrives
// after the user moved on is dropped.

import { $, showFlash, showFormError } from './dom.js';
import { ApiError } from './http.js';
import { info, signOut } from './session.js';

const AUTO_REFRESH_MS = 10_000;
const VIEWS = /** @type {const} */ (['login', 'events', 'event', 'health', 'recovery', 'endpoint']);

/** The list's parameters, as the admin API names them: filters, search and created range. */
export const SEARCH_KEYS = /** @type {const} */ (['transaction_id', 'reference', 'email']);
export const LIST_KEYS = /** @type {const} */ (['status', 'event', 'stuck', ...SEARCH_KEYS, 'created_from', 'created_to']);

/**
 * @typedef {{ view: 'events', page: number } & { [key in typeof LIST_KEYS[number]]?: string }} ListRoute
 * @typedef {ListRoute | { view: 'event', id: string } | { view: 'endpoint' } | { view: 'health', window: '24h' | '7d' }
 *   | { view: 'recovery', id: string | null }} Route
 * @typedef {{ [R in Route as R['view']]: (route: R, ticket: number) => Promise<void> }} Renderers
 */

/**
 * Each view's `render(route, ticket)`, by name (set once at start).
 * @type {Renderers | undefined}
 */
let renderers;
let ticket = 0;
/** @type {number | undefined} */
let autoRefreshTimer;
/**
 * Where "back" from an event leads: the list as last filtered.
 * @type {ListRoute}
 */
export let lastListRoute = { view: 'events', page: 1 };

/** @param {Renderers} views */
export function setViews(views) {
  renderers = views;
}

/**
 * Whether the render that holds this ticket is still the latest one.
 * @param {number} mine
 */
export const isCurrent = (mine) => mine === ticket;

/** @param {typeof VIEWS[number]} name */
export function showView(name) {
  $('#loading').hidden = true;
  for (const view of VIEWS) $(`#${view}-view`).hidden = view !== name;
  const signedIn = name !== 'login';
  $('#nav').hidden = !signedIn;
  $('#session').hidden = !signedIn;
  for (const link of document.querySelectorAll('#nav a')) {
    if (!(link instanceof HTMLElement)) continue;
    const current = link.dataset.view === (name === 'event' ? 'events' : name);
    if (current) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

/** @returns {Route} */
export function parseRoute() {
  const [path, query = ''] = location.hash.replace(/^#/, '').split('?');
  const params = new URLSearchParams(query);
  const detail = /^\/events\/([1-9][0-9]{0,14})$/.exec(path);
  if (detail) return { view: 'event', id: detail[1] };
  if (path === '/endpoint') return { view: 'endpoint' };
  if (path === '/health') return { view: 'health', window: params.get('window') === '7d' ? '7d' : '24h' };
  const recovery = /^\/recovery(?:\/([A-Za-z0-9_-]{8,64}))?$/.exec(path);
  if (recovery) return { view: 'recovery', id: recovery[1] ?? null };
  const page = /^[1-9][0-9]{0,5}$/.test(params.get('page') ?? '') ? Number(params.get('page')) : 1;
  /** @type {ListRoute} */
  const route = { view: 'events', page };
  for (const key of LIST_KEYS) route[key] = params.get(key) ?? '';
  return route;
}

/** @param {ListRoute} route */
export function eventsHash(route) {
  const params = new URLSearchParams();
  for (const key of LIST_KEYS) if (route[key]) params.set(key, route[key]);
  if (route.page > 1) params.set('page', String(route.page));
  const query = params.toString();
  return query ? `#/events?${query}` : '#/events';
}

/** The view the address names, or the sign-in form. */
export async function render() {
  const mine = ++ticket;
  if (!info) {
    showView('login');
    $('#login-form [name=username]').focus();
    return;
  }
  const route = parseRoute();
  try {
    // Each view's renderer takes the routes of its view; TypeScript cannot relate the two through the index.
    const renderView = /** @type {(route: Route, ticket: number) => Promise<void>} */ (renderers?.[route.view]);
    await renderView(route, mine);
  } catch (err) {
    if (mine === ticket) handleError(err);
  }
}

/** @param {unknown} err */
export function handleError(err) {
  if (err instanceof ApiError && err.status === 401) {
    signOut();
    void render();
    showFormError('#login-error', 'Die Sitzung ist abgelaufen. Bitte erneut anmelden.');
    return;
  }
  if (err instanceof ApiError) showFlash('error', `Fehler ${err.status}: ${err.message}`);
  else showFlash('error', 'Der Server ist nicht erreichbar.');
}

/** Follows the address: from the list, "back" leads to it as it is now. */
export function followAddress() {
  const route = parseRoute();
  if (route.view === 'events') lastListRoute = route;
  void render();
}

/**
 * Reloads the list, the event or the health view shown; never a form, which would throw away what is being typed
 * (a recovery's progress reloads itself while it runs).
 * @param {boolean} on
 */
export function setAutoRefresh(on) {
  clearInterval(autoRefreshTimer);
  autoRefreshTimer = on
    ? setInterval(() => {
        if (['events', 'event', 'health'].includes(parseRoute().view)) void render();
      }, AUTO_REFRESH_MS)
    : undefined;
}
