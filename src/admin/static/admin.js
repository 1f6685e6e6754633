// The admin page: plain DOM, no framework, no build step. It only calls the staff-only admin API.
// Every value from the API reaches the page as text (textContent / text nodes), never as HTML: subscriber response
// bodies and payloads are arbitrary bytes from outside. The Content-Security-Policy forbids inline script as well.

import { deliveryChart } from './chart.js';

const PAGE_SIZE = 20;
const AUTO_REFRESH_MS = 10_000;
const FOLLOW_UP_MS = 1_000;
const FOLLOW_UP_ROUNDS = 30;
const SNIPPET_LENGTH = 80;
const RECOVERY_POLL_MS = 1_000;
const TOKENS_KEY = 'webhook-admin.tokens';

// ---------------------------------------------------------------------------------------------------------------
// DOM helpers

const $ = (selector, root = document) => root.querySelector(selector);

/** An element; strings among the children become text nodes, so nothing is ever parsed as HTML. */
function h(tag, props = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') element.className = value;
    else if (key.startsWith('on')) element.addEventListener(key.slice(2), value);
    else element.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

const dash = () => h('span', { class: 'muted' }, '–');

// Operators read Swiss local time, whatever the browser's zone; the exact UTC value from the API shows on hover.
const zurich = (options) => new Intl.DateTimeFormat('de-CH', { timeZone: 'Europe/Zurich', ...options });
const timeFormat = zurich({ dateStyle: 'medium', timeStyle: 'medium' });
const shortTimeFormat = zurich({ dateStyle: 'medium', timeStyle: 'short' });

// datetime-local fields are read and filled in Swiss time too; the API gets UTC.
const wallClockParts = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'Europe/Zurich',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

/** `2025-07-15T10:30`: the Swiss wall clock at an instant, as a datetime-local field shows it. */
function zurichWallClock(ms) {
  const part = Object.fromEntries(wallClockParts.formatToParts(ms).map(({ type, value }) => [type, value]));
  return `${part.year}-${part.month}-${part.day}T${part.hour}:${part.minute}`;
}

/** A datetime-local value read as Swiss time, as UTC ISO text; '' for an empty or incomplete field. */
function fromZurichInput(value) {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(value);
  if (!match) return '';
  const wall = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]), Number(match[4]), Number(match[5]));
  // The offset depends on the instant sought: two corrections settle it, also next to a change of summer time.
  let instant = wall;
  for (let round = 0; round < 2; round++) instant += wall - Date.parse(`${zurichWallClock(instant)}:00Z`);
  return new Date(instant).toISOString().replace('.000Z', 'Z');
}

const toZurichInput = (iso) => (iso ? zurichWallClock(Date.parse(iso)) : '');

function time(iso, format = timeFormat) {
  if (!iso) return dash();
  return h('time', { datetime: iso, title: iso }, format.format(new Date(iso)));
}

function snippet(text) {
  if (!text) return '';
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > SNIPPET_LENGTH ? `${oneLine.slice(0, SNIPPET_LENGTH)}…` : oneLine;
}

function statusBadge(event) {
  const known = info.statuses.some((status) => status.value === event.status);
  return h('span', { class: `badge status-${known ? event.status : 'unknown'}` }, event.status_label);
}

/** Beside the status: a delivery that should have moved on and has not (docs/admin.md, "Stuck events"). */
const stuckBadge = (event) =>
  event.stuck
    ? h(
        'span',
        {
          class: 'badge stuck',
          title: `Seit mehr als ${info.stuck_after_minutes} Minuten fällig und kein Versuch: Worker, Temporal oder Datenbank prüfen`,
        },
        'Hängt fest',
      )
    : null;

const testBadge = (event) => (event.test ? h('span', { class: 'badge test', title: 'Testereignis (webhook-test: 1)' }, 'Test') : null);

function showFlash(kind, message) {
  const flash = $('#flash');
  flash.className = `flash ${kind}`;
  flash.textContent = message;
  flash.hidden = false;
  clearTimeout(showFlash.timer);
  if (kind === 'success') showFlash.timer = setTimeout(() => (flash.hidden = true), 6_000);
}

// ---------------------------------------------------------------------------------------------------------------
// Session and API calls

class ApiError extends Error {
  constructor(status, body) {
    super(body && typeof body.error === 'string' ? body.error : `HTTP ${status}`);
    this.status = status;
    this.code = body && body.code;
  }
}

const session = {
  /** `{access, refresh}` from POST /authentication/create, kept for the tab in sessionStorage. */
  tokens: null,
  refreshing: null,
};

function storeTokens(tokens) {
  session.tokens = tokens;
  if (tokens) sessionStorage.setItem(TOKENS_KEY, JSON.stringify(tokens));
  else sessionStorage.removeItem(TOKENS_KEY);
}

function restoreTokens() {
  try {
    const stored = JSON.parse(sessionStorage.getItem(TOKENS_KEY) ?? 'null');
    if (stored && typeof stored.access === 'string' && typeof stored.refresh === 'string') session.tokens = stored;
  } catch {
    sessionStorage.removeItem(TOKENS_KEY);
  }
}

function authorization() {
  return session.tokens ? `Bearer ${session.tokens.access}` : null;
}

async function send(method, path, body, auth) {
  const headers = { Accept: 'application/json' };
  if (auth) headers.Authorization = auth;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
    credentials: 'omit',
  });
  const text = await response.text();
  let data;
  try {
    data = text ? JSON.parse(text) : undefined;
  } catch {
    data = undefined;
  }
  if (!response.ok) throw new ApiError(response.status, data);
  return data;
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
async function api(method, path, body) {
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

async function signIn(username, password) {
  storeTokens(await send('POST', '/authentication/create', { username, password }));
}

function forgetSession() {
  const refresh = session.tokens && session.tokens.refresh;
  storeTokens(null);
  info = null;
  // Blocks the refresh token on the server; the page is signed out whatever the answer.
  if (refresh) send('POST', '/authentication/logout', { refresh }).catch(() => undefined);
}

// ---------------------------------------------------------------------------------------------------------------
// State and routing (#/events?status=&event=&transaction_id=…&page=, #/events/<id>, #/health?window=,
// #/recovery, #/recovery/<id>, #/endpoint)

/** GET /admin/api/info once signed in: user name, filter and form choices, Temporal UI address. */
let info = null;
/** The list's parameters, as the admin API names them: filters, search and created range. */
const SEARCH_KEYS = ['transaction_id', 'reference', 'email'];
const LIST_KEYS = ['status', 'event', 'stuck', ...SEARCH_KEYS, 'created_from', 'created_to'];
/** Where "back" from an event leads: the list as last filtered. */
let lastListRoute = { view: 'events', page: 1 };
/** Each render takes a ticket; an answer that arrives after the user moved on is dropped. */
let ticket = 0;
let autoRefreshTimer = null;
let followUpTimer = null;

const VIEWS = ['login', 'events', 'event', 'health', 'recovery', 'endpoint'];

function showView(name) {
  $('#loading').hidden = true;
  for (const view of VIEWS) $(`#${view}-view`).hidden = view !== name;
  const signedIn = name !== 'login';
  $('#nav').hidden = !signedIn;
  $('#session').hidden = !signedIn;
  for (const link of document.querySelectorAll('#nav a')) {
    const current = link.dataset.view === (name === 'event' ? 'events' : name);
    if (current) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

function parseRoute() {
  const [path, query = ''] = location.hash.replace(/^#/, '').split('?');
  const params = new URLSearchParams(query);
  const detail = /^\/events\/([1-9][0-9]{0,14})$/.exec(path);
  if (detail) return { view: 'event', id: detail[1] };
  if (path === '/endpoint') return { view: 'endpoint' };
  if (path === '/health') return { view: 'health', window: params.get('window') === '7d' ? '7d' : '24h' };
  const recovery = /^\/recovery(?:\/([A-Za-z0-9_-]{8,64}))?$/.exec(path);
  if (recovery) return { view: 'recovery', id: recovery[1] ?? null };
  const page = /^[1-9][0-9]{0,5}$/.test(params.get('page') ?? '') ? Number(params.get('page')) : 1;
  const route = { view: 'events', page };
  for (const key of LIST_KEYS) route[key] = params.get(key) ?? '';
  return route;
}

function eventsHash(route) {
  const params = new URLSearchParams();
  for (const key of LIST_KEYS) if (route[key]) params.set(key, route[key]);
  if (route.page > 1) params.set('page', String(route.page));
  const query = params.toString();
  return query ? `#/events?${query}` : '#/events';
}

async function render() {
  const mine = ++ticket;
  clearTimeout(followUpTimer);
  if (!info) {
    showView('login');
    $('#login-form [name=username]').focus();
    return;
  }
  const route = parseRoute();
  try {
    if (route.view === 'event') await renderEvent(route.id, mine);
    else if (route.view === 'endpoint') await renderEndpoint(mine);
    else if (route.view === 'health') await renderHealth(route, mine);
    else if (route.view === 'recovery') await renderRecovery(route, mine);
    else await renderEvents(route, mine);
  } catch (err) {
    if (mine === ticket) handleError(err);
  }
}

function handleError(err) {
  if (err instanceof ApiError && err.status === 401) {
    forgetSession();
    void render();
    showLoginError('Die Sitzung ist abgelaufen. Bitte erneut anmelden.');
    return;
  }
  if (err instanceof ApiError) showFlash('error', `Fehler ${err.status}: ${err.message}`);
  else showFlash('error', 'Der Server ist nicht erreichbar.');
}

/**
 * Reloads the list, the event or the health view shown; never a form, which would throw away what is being typed
 * (a recovery's progress reloads itself while it runs).
 */
function setAutoRefresh(on) {
  clearInterval(autoRefreshTimer);
  autoRefreshTimer = on
    ? setInterval(() => {
        if (['events', 'event', 'health'].includes(parseRoute().view)) void render();
      }, AUTO_REFRESH_MS)
    : null;
}

// ---------------------------------------------------------------------------------------------------------------
// Login

function showLoginError(message) {
  const error = $('#login-error');
  error.textContent = message;
  error.hidden = !message;
}

async function onLogin(submit) {
  submit.preventDefault();
  const form = submit.currentTarget;
  const username = form.username.value.trim();
  const password = form.password.value;
  if (!username || !password) return showLoginError('Benutzername und Passwort eingeben.');
  const button = $('button[type=submit]', form);
  button.disabled = true;
  showLoginError('');
  try {
    await signIn(username, password);
    info = await api('GET', '/admin/api/info');
    form.reset();
    fillChoices();
    $('#session-user').textContent = info.username;
    await render();
  } catch (err) {
    forgetSession();
    if (err instanceof ApiError && err.status === 401) showLoginError('Benutzername oder Passwort ist falsch.');
    else if (err instanceof ApiError && err.status === 403) showLoginError('Dieses Konto hat keine Staff-Berechtigung.');
    else if (err instanceof ApiError) showLoginError(`Anmeldung fehlgeschlagen: ${err.message}`);
    else showLoginError('Der Server ist nicht erreichbar.');
  } finally {
    button.disabled = false;
  }
}

/** The filter and form choices, as the server lists them. */
function fillChoices() {
  const all = () => h('option', { value: '' }, 'Alle');
  const filters = $('#filters');
  filters.status.replaceChildren(all(), ...info.statuses.map((s) => h('option', { value: s.value }, s.label)));
  filters.event.replaceChildren(all(), ...info.event_types.map((type) => h('option', { value: type }, type)));
  const form = $('#endpoint-form');
  form.payload_version.replaceChildren(
    ...info.payload_versions.map((v) => h('option', { value: v.value }, v.selectable ? v.value : `${v.value} (nur mit Warenkorb)`)),
  );
  $('#version-hint').textContent = info.payload_versions.every((v) => v.selectable)
    ? 'Neue Felder erscheinen erst nach einem Wechsel der Version.'
    : 'v2.1 setzt die Warenkorb-Logik des Spendenshops voraus.';
  const eventChecks = () =>
    info.event_types.map((type) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'events', value: type }), h('code', {}, type)));
  $('#endpoint-events').replaceChildren(...eventChecks());
  $('#recovery-events').replaceChildren(...eventChecks());
  $('#test-event-form').event.replaceChildren(...info.event_types.map((type) => h('option', { value: type }, type)));
}

// ---------------------------------------------------------------------------------------------------------------
// Events list

async function renderEvents(route, mine) {
  const params = new URLSearchParams({ page: String(route.page), page_size: String(PAGE_SIZE) });
  for (const key of LIST_KEYS) if (route[key]) params.set(key, route[key]);
  let data;
  try {
    data = await api('GET', `/admin/api/webhook-events?${params}`);
  } catch (err) {
    // A page that no longer exists (fewer events under a filter): back to the first one.
    if (err instanceof ApiError && err.status === 404 && route.page > 1 && mine === ticket) {
      location.hash = eventsHash({ ...route, page: 1 });
      return;
    }
    throw err;
  }
  if (mine !== ticket) return;

  const filters = $('#filters');
  filters.status.value = route.status;
  filters.event.value = route.event;
  filters.stuck.checked = route.stuck === 'true';
  fillSearch(route);
  const rows = data.results.map((event) => {
    const open = () => (location.hash = `#/events/${event.id}`);
    return h(
      'tr',
      { class: 'clickable', onclick: open },
      h('td', { class: 'num' }, h('a', { href: `#/events/${event.id}` }, `#${event.id}`)),
      h('td', {}, h('code', {}, event.event), testBadge(event)),
      h('td', {}, time(event.created_at, shortTimeFormat)),
      h('td', {}, statusBadge(event), stuckBadge(event)),
      h('td', { class: 'num' }, String(event.attempts)),
      h(
        'td',
        { class: 'response' },
        event.last_response_code === null ? dash() : h('span', { class: 'code' }, String(event.last_response_code)),
        event.last_response_body ? h('span', { class: 'snippet', title: snippet(event.last_response_body) }, snippet(event.last_response_body)) : null,
      ),
      h('td', {}, time(event.next_attempt_at, shortTimeFormat)),
    );
  });
  $('#events-table tbody').replaceChildren(...rows);
  $('#events-empty').hidden = rows.length > 0;
  $('#events-count').textContent = `${data.count} ${data.count === 1 ? 'Ereignis' : 'Ereignisse'}`;
  const pages = Math.max(1, Math.ceil(data.count / PAGE_SIZE));
  $('#page-info').textContent = `Seite ${route.page} von ${pages}`;
  $('#page-previous').disabled = !data.previous;
  $('#page-next').disabled = !data.next;
  showView('events');
}

/** The list as the filters and the search form say now: a change of either applies what is typed in the other. */
function listRouteFromForms() {
  const filters = $('#filters');
  const search = $('#search');
  const route = { view: 'events', page: 1, status: filters.status.value, event: filters.event.value, stuck: filters.stuck.checked ? 'true' : '' };
  const term = search.term.value.trim();
  if (term) route[search.by.value] = term;
  route.created_from = fromZurichInput(search.created_from.value);
  route.created_to = fromZurichInput(search.created_to.value);
  return route;
}

function onFilterChange() {
  location.hash = eventsHash(listRouteFromForms());
}

/** The search form as the route says (the list's address holds the search, so it can be bookmarked). */
function fillSearch(route) {
  const form = $('#search');
  const by = SEARCH_KEYS.find((key) => route[key]) ?? form.by.value;
  form.by.value = by;
  form.term.value = route[by] ?? '';
  form.created_from.value = toZurichInput(route.created_from);
  form.created_to.value = toZurichInput(route.created_to);
}

function onSearch(submit) {
  submit.preventDefault();
  location.hash = eventsHash(listRouteFromForms());
}

function resetSearch() {
  const { status, event, stuck } = parseRoute();
  $('#search').reset();
  location.hash = eventsHash({ status, event, stuck, page: 1 });
}

function turnPage(step) {
  const route = parseRoute();
  location.hash = eventsHash({ ...route, page: route.page + step });
}

// ---------------------------------------------------------------------------------------------------------------
// One event

const RESENDABLE = ['failed', 'max_retries_reached'];
const OUTCOME_LABELS = { delivered: 'Zugestellt', failed: 'Fehlgeschlagen' };

function temporalLink(workflowId, id = 'temporal-link') {
  const base = info.temporal_ui_url;
  if (!base || !/^https?:\/\//i.test(base)) return null;
  const href = `${base}/namespaces/${encodeURIComponent(info.temporal_namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return h('a', { href, target: '_blank', rel: 'noopener noreferrer', class: 'button', id }, 'Workflow in Temporal UI ↗');
}

function field(label, value) {
  return [h('dt', {}, label), h('dd', {}, value)];
}

function block(text) {
  return text ? h('pre', { class: 'block' }, text) : dash();
}

async function renderEvent(id, mine) {
  const event = await api('GET', `/admin/api/webhook-events/${id}`);
  if (mine !== ticket) return;
  const canResend = RESENDABLE.includes(event.status) && !event.payload_dropped_at;
  const resendButton = h(
    'button',
    {
      type: 'button',
      id: 'resend',
      class: 'primary',
      disabled: !canResend,
      title: canResend
        ? null
        : event.payload_dropped_at
          ? 'Die Payload wurde nach Ablauf der Aufbewahrungsfrist gelöscht'
          : event.status === 'delivered'
            ? 'Bereits zugestellt'
            : 'Der erste Versuch steht noch aus',
      onclick: () => resend(event, resendButton),
    },
    'Erneut senden',
  );
  const attempts = event.delivery_attempts.map((attempt) =>
    h(
      'tr',
      {},
      h('td', { class: 'num' }, String(attempt.number)),
      h('td', {}, attempt.manual ? 'manuell' : 'geplant'),
      h('td', {}, time(attempt.started_at)),
      h('td', { class: 'num' }, `${attempt.duration_ms} ms`),
      h('td', {}, h('span', { class: `badge outcome-${attempt.outcome === 'delivered' ? 'delivered' : 'failed'}` }, OUTCOME_LABELS[attempt.outcome] ?? attempt.outcome)),
      h('td', { class: 'num' }, attempt.response_code === null ? dash() : String(attempt.response_code)),
      h('td', { class: 'wide' }, attempt.error ? h('p', { class: 'error-text' }, attempt.error) : null, attempt.response_body ? h('pre', { class: 'block small' }, attempt.response_body) : null),
    ),
  );
  const view = $('#event-view');
  view.replaceChildren(
    h('a', { href: eventsHash(lastListRoute), class: 'back' }, '← Alle Ereignisse'),
    h(
      'div',
      { class: 'heading' },
      h('h1', {}, `Ereignis #${event.id}`),
      statusBadge(event),
      stuckBadge(event),
      testBadge(event),
      h('div', { class: 'spacer' }),
      temporalLink(event.workflow_id),
      resendButton,
    ),
    h(
      'div',
      { class: 'card' },
      h(
        'dl',
        { class: 'facts' },
        field('Ereignistyp', h('code', {}, event.event)),
        field('Payload-Version', event.payload_version),
        field('Erstellt', time(event.created_at)),
        field('Versuche', String(event.attempts)),
        field('Nächster Versuch', time(event.next_attempt_at)),
        field('Zugestellt', time(event.delivered_at)),
        field('Letzter Antwortcode', event.last_response_code === null ? dash() : String(event.last_response_code)),
        field('Workflow-ID', h('code', {}, event.workflow_id)),
        event.last_error ? field('Letzter Fehler', h('span', { class: 'error-text' }, event.last_error)) : null,
      ),
      h('h2', {}, 'Letzte Antwort'),
      h('div', { id: 'last-response' }, block(event.last_response_body)),
    ),
    h('h2', {}, `Zustellversuche (${event.delivery_attempts.length})`),
    h(
      'div',
      { class: 'card flush' },
      attempts.length
        ? h(
            'table',
            { id: 'attempts-table' },
            h('thead', {}, h('tr', {}, h('th', { class: 'num' }, 'Nr.'), h('th', {}, 'Art'), h('th', {}, 'Gestartet'), h('th', { class: 'num' }, 'Dauer'), h('th', {}, 'Ergebnis'), h('th', { class: 'num' }, 'Code'), h('th', {}, 'Antwort / Fehler'))),
            h('tbody', {}, attempts),
          )
        : h('p', { class: 'empty muted' }, 'Noch kein Zustellversuch.'),
    ),
    h('h2', {}, 'Payload'),
    event.payload_dropped_at
      ? h(
          'p',
          { class: 'notice', id: 'payload-dropped' },
          'Payload und Antworttexte wurden nach Ablauf der Aufbewahrungsfrist gelöscht (',
          time(event.payload_dropped_at),
          '). Status, Antwortcodes und Versuche bleiben bis zur Löschung des Ereignisses.',
        )
      : h('pre', { class: 'block payload', id: 'payload' }, event.payload_is_json ? JSON.stringify(event.payload, null, 2) : event.payload),
  );
  showView('event');
}

async function resend(event, button) {
  button.disabled = true;
  try {
    const answer = await api('POST', `/admin/api/webhook-events/${event.id}/resend`);
    showFlash('success', `Erneuter Versand angestossen (Workflow ${answer.workflow_id}).`);
    followUp(event.id, event.attempts, FOLLOW_UP_ROUNDS);
  } catch (err) {
    handleError(err);
    button.disabled = false;
  }
}

/** After a resend, looks again every second until the attempt shows up (or gives up after half a minute). */
function followUp(id, attemptsBefore, rounds) {
  clearTimeout(followUpTimer);
  followUpTimer = setTimeout(() => void lookAgain(id, attemptsBefore, rounds), FOLLOW_UP_MS);
}

async function lookAgain(id, attemptsBefore, rounds) {
  const route = parseRoute();
  if (route.view !== 'event' || route.id !== String(id)) return;
  try {
    const current = await api('GET', `/admin/api/webhook-events/${id}`);
    if (current.attempts > attemptsBefore || rounds <= 1) await render();
    else followUp(id, attemptsBefore, rounds - 1);
  } catch (err) {
    handleError(err);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Delivery health (#/health?window=24h|7d)

const percent = new Intl.NumberFormat('de-CH', { style: 'percent', maximumFractionDigits: 1 });
const number = new Intl.NumberFormat('de-CH');
const seconds = new Intl.NumberFormat('de-CH', { minimumFractionDigits: 1, maximumFractionDigits: 1 });

function stat(label, value, className = '') {
  return h('dl', { class: `stat ${className}` }, h('dt', {}, label), h('dd', {}, value));
}

async function renderHealth(route, mine) {
  const data = await api('GET', `/admin/api/delivery-health?window=${route.window}`);
  if (mine !== ticket) return;
  for (const link of document.querySelectorAll('#health-view .segmented a')) {
    link.setAttribute('aria-current', String(link.dataset.window === route.window));
  }
  $('#health-range').textContent = `seit ${shortTimeFormat.format(new Date(data.from))}`;
  const rate = data.success_rate;
  const ms = (value) => (value === null ? dash() : value < 1000 ? `${number.format(value)} ms` : `${seconds.format(value / 1000)} s`);
  $('#health-stats').replaceChildren(
    stat('Zustellversuche', [number.format(data.attempts), h('small', { class: 'muted' }, `${number.format(data.failed)} fehlgeschlagen`)]),
    stat('Erfolgsquote', rate === null ? dash() : percent.format(rate), rate === null ? '' : rate >= 0.95 ? 'good' : rate < 0.8 ? 'bad' : ''),
    stat('Median Versuchsdauer', ms(data.median_ms)),
    stat('95. Perzentil', ms(data.p95_ms)),
    stat('Letzte erfolgreiche Zustellung', time(data.last_success_at, shortTimeFormat)),
  );
  $('#health-chart').replaceChildren(deliveryChart(data.hours));
  showView('health');
}

// ---------------------------------------------------------------------------------------------------------------
// Bulk recovery (#/recovery, #/recovery/<id>)

/** The preview shown, with the idempotency key its start uses: a double click or a retried start starts one recovery. */
let recoveryPreview = null;
let recoveryTimer = null;

const RECOVERY_STATUS_LABELS = {
  running: 'Läuft',
  completed: 'Abgeschlossen',
  failed: 'Fehlgeschlagen',
  cancelled: 'Abgebrochen',
  terminated: 'Beendet',
  timed_out: 'Zeit abgelaufen',
};

function recoveryFilter(form) {
  return {
    created_from: fromZurichInput(form.created_from.value),
    created_to: fromZurichInput(form.created_to.value),
    events: Array.from(form.querySelectorAll('[name=events]:checked'), (box) => box.value),
  };
}

function showRecoveryError(message) {
  const error = $('#recovery-error');
  error.textContent = message;
  error.hidden = !message;
}

function forgetRecoveryPreview() {
  recoveryPreview = null;
  $('#recovery-preview').hidden = true;
}

async function onRecoveryPreview(submit) {
  submit.preventDefault();
  const form = submit.currentTarget;
  forgetRecoveryPreview();
  showRecoveryError('');
  const filter = recoveryFilter(form);
  if (!filter.created_from || !filter.created_to) return showRecoveryError('Beginn und Ende des Zeitraums angeben.');
  try {
    const preview = await api('POST', '/admin/api/recoveries/preview', filter);
    recoveryPreview = { filter, key: crypto.randomUUID() };
    const { failed, max_retries_reached: exhausted } = preview.by_status;
    $('#recovery-count').textContent =
      preview.count === 0
        ? 'Keine Ereignisse in diesem Zeitraum sind fehlgeschlagen.'
        : `${preview.count} ${preview.count === 1 ? 'Ereignis wird' : 'Ereignisse werden'} erneut gesendet: ${failed} fehlgeschlagen, ${exhausted} mit maximalen Wiederholungen.`;
    const start = $('#recovery-start');
    start.textContent = `${preview.count} ${preview.count === 1 ? 'Ereignis' : 'Ereignisse'} erneut senden`;
    start.disabled = preview.count === 0;
    start.hidden = preview.count === 0;
    $('#recovery-preview').hidden = false;
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) showRecoveryError(`Ungültig: ${err.message}`);
    else handleError(err);
  }
}

async function onRecoveryStart(click) {
  if (!recoveryPreview) return;
  const button = click.currentTarget;
  button.disabled = true;
  try {
    const recovery = await api('POST', '/admin/api/recoveries', { ...recoveryPreview.filter, idempotency_key: recoveryPreview.key });
    forgetRecoveryPreview();
    location.hash = `#/recovery/${recovery.id}`;
  } catch (err) {
    button.disabled = false;
    handleError(err);
  }
}

async function renderRecovery(route, mine) {
  clearTimeout(recoveryTimer);
  const form = $('#recovery-form');
  const progress = $('#recovery-progress');
  form.hidden = Boolean(route.id);
  progress.hidden = !route.id;
  if (!route.id) {
    showView('recovery');
    return;
  }
  const recovery = await api('GET', `/admin/api/recoveries/${route.id}`);
  if (mine !== ticket) return;
  progress.replaceChildren(recoveryCard(recovery));
  showView('recovery');
  if (recovery.status === 'running' || !recovery.progress) {
    recoveryTimer = setTimeout(() => {
      if (mine === ticket) void render();
    }, RECOVERY_POLL_MS);
  }
}

function recoveryCard(recovery) {
  const counts = recovery.progress;
  const count = (key) => (counts ? number.format(counts[key]) : dash());
  const statusClass = recovery.status === 'completed' ? 'status-delivered' : recovery.status === 'running' ? 'status-waiting' : 'status-max_retries_reached';
  return h(
    'div',
    { class: 'card', id: 'recovery-card' },
    h(
      'div',
      { class: 'heading' },
      h('h2', { class: 'flush-top' }, 'Wiederherstellung'),
      h('span', { class: `badge ${statusClass}`, id: 'recovery-status' }, RECOVERY_STATUS_LABELS[recovery.status] ?? recovery.status),
      h('div', { class: 'spacer' }),
      temporalLink(recovery.workflow_id, 'recovery-temporal-link'),
      h('a', { href: '#/recovery', class: 'button' }, 'Neue Wiederherstellung'),
    ),
    counts
      ? [
          h('progress', { id: 'recovery-bar', max: String(Math.max(1, counts.total)), value: String(Math.min(counts.processed, counts.total)) }),
          h('p', { id: 'recovery-summary' }, `${counts.processed} von ${counts.total} bearbeitet`),
        ]
      : h('p', { class: 'muted', id: 'recovery-summary' }, 'Der Fortschritt wird gleich angezeigt…'),
    h(
      'div',
      { class: 'stats', id: 'recovery-counts' },
      stat('Zugestellt', count('delivered'), counts && counts.delivered > 0 ? 'good' : ''),
      stat('Erneut fehlgeschlagen', count('failed'), counts && counts.failed > 0 ? 'bad' : ''),
      stat('Übersprungen', count('skipped')),
      stat('Ohne Antwort (2 Min.)', count('unconfirmed')),
    ),
    h(
      'dl',
      { class: 'facts recovery-facts' },
      field('Erstellt ab', time(recovery.created_from, shortTimeFormat)),
      field('Erstellt vor', time(recovery.created_to, shortTimeFormat)),
      field('Ereignistypen', recovery.events.length ? recovery.events.join(', ') : 'alle Typen'),
      field('Angefordert von', recovery.requested_by),
      field('Gestartet', time(recovery.started_at)),
      field('Beendet', time(recovery.closed_at)),
    ),
  );
}

// ---------------------------------------------------------------------------------------------------------------
// Test event (on the endpoint view)

async function onSendTestEvent(submit) {
  submit.preventDefault();
  const form = submit.currentTarget;
  const button = $('#send-test-event');
  const result = $('#test-event-result');
  button.disabled = true;
  result.hidden = true;
  try {
    const sent = await api('POST', '/admin/api/webhook-endpoint/test-events', { event: form.event.value });
    result.className = 'notice';
    result.replaceChildren(
      `Testereignis ${sent.event} (${sent.payload_version}) erstellt: `,
      h('a', { href: `#/events/${sent.id}`, id: 'test-event-link' }, `Ereignis #${sent.id}`),
      ' zeigt, was der Empfänger geantwortet hat.',
    );
  } catch (err) {
    if (!(err instanceof ApiError) || err.status === 401) return handleError(err);
    result.className = 'error';
    result.textContent = `Nicht gesendet: ${err.message}`;
  } finally {
    result.hidden = false;
    button.disabled = false;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Endpoint configuration

let endpoint = null;

async function renderEndpoint(mine) {
  const shown = await api('GET', '/admin/api/webhook-endpoint');
  if (mine !== ticket) return;
  endpoint = shown;
  fillEndpointForm();
  // A test event goes to the saved endpoint: there must be one, switched on.
  $('#send-test-event').disabled = !endpoint.configured || !endpoint.active;
  $('#send-test-event').title = endpoint.configured && endpoint.active ? '' : 'Erst einen aktiven Endpunkt speichern';
  $('#test-event-result').hidden = true;
  showView('endpoint');
}

function setState(chip, isSet) {
  chip.textContent = isSet ? 'gesetzt' : 'nicht gesetzt';
  chip.className = `chip ${isSet ? 'on' : 'off'}`;
}

function fillEndpointForm() {
  const form = $('#endpoint-form');
  form.reset();
  form.url.value = endpoint.url ?? '';
  form.active.checked = endpoint.active;
  form.payload_version.value = endpoint.payload_version;
  // An endpoint keeps a version it already has, even one that could not be chosen now.
  for (const option of form.payload_version.options) {
    const selectable = info.payload_versions.some((v) => v.value === option.value && v.selectable);
    option.disabled = !selectable && option.value !== endpoint.payload_version;
  }
  for (const box of form.querySelectorAll('[name=events]')) box.checked = endpoint.events.includes(box.value);
  form.basic_auth_username.value = endpoint.basic_auth_username ?? '';
  form.basic_auth_password.placeholder = endpoint.basic_auth_password_set ? '•••••• (gespeichert)' : '';
  setState($('#password-state'), endpoint.basic_auth_password_set);
  setState($('#secret-state'), endpoint.signing_secret_set);
  $('#remove-secret-label').hidden = !endpoint.signing_secret_set;
  $('#endpoint-new').hidden = endpoint.configured;
  $('#endpoint-updated').textContent = endpoint.updated_at ? `Zuletzt geändert: ${timeFormat.format(new Date(endpoint.updated_at))}` : '';
  $('#endpoint-error').hidden = true;
}

/** The change to send: write-only fields only when something was typed (or removed), so saving keeps them. */
function endpointChange(form) {
  const change = {
    url: form.url.value.trim(),
    active: form.active.checked,
    payload_version: form.payload_version.value,
    events: Array.from(form.querySelectorAll('[name=events]:checked'), (box) => box.value),
  };
  const username = form.basic_auth_username.value.trim();
  const password = form.basic_auth_password.value;
  if (username) {
    change.basic_auth_username = username;
    if (password) change.basic_auth_password = password;
  } else if (endpoint.basic_auth_username !== null || endpoint.basic_auth_password_set) {
    change.basic_auth_username = null;
    change.basic_auth_password = null;
  }
  const secret = form.signing_secret.value.trim();
  if (form.remove_signing_secret.checked) change.signing_secret = null;
  else if (secret) change.signing_secret = secret;
  return change;
}

async function onSaveEndpoint(submit) {
  submit.preventDefault();
  const form = submit.currentTarget;
  const button = $('button[type=submit]', form);
  const error = $('#endpoint-error');
  button.disabled = true;
  error.hidden = true;
  $('#flash').hidden = true;
  try {
    endpoint = await api('PUT', '/admin/api/webhook-endpoint', endpointChange(form));
    fillEndpointForm();
    $('#send-test-event').disabled = !endpoint.active;
    showFlash('success', 'Endpunkt gespeichert.');
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) {
      error.textContent = `Nicht gespeichert: ${err.message}`;
      error.hidden = false;
    } else handleError(err);
  } finally {
    button.disabled = false;
  }
}

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
function generateSecret() {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  const form = $('#endpoint-form');
  form.signing_secret.value = `whsec_${btoa(String.fromCharCode(...bytes))}`;
  form.remove_signing_secret.checked = false;
}

// ---------------------------------------------------------------------------------------------------------------
// Start

function onHashChange() {
  const route = parseRoute();
  if (route.view === 'events') lastListRoute = route;
  $('#flash').hidden = true;
  void render();
}

async function start() {
  $('#login-form').addEventListener('submit', onLogin);
  $('#logout').addEventListener('click', () => {
    forgetSession();
    void render();
  });
  $('#filters').addEventListener('change', onFilterChange);
  $('#search').addEventListener('submit', onSearch);
  $('#search-reset').addEventListener('click', resetSearch);
  $('#recovery-form').addEventListener('submit', onRecoveryPreview);
  $('#recovery-form').addEventListener('input', forgetRecoveryPreview);
  $('#recovery-start').addEventListener('click', onRecoveryStart);
  $('#test-event-form').addEventListener('submit', onSendTestEvent);
  $('#filters').addEventListener('submit', (submit) => submit.preventDefault());
  $('#page-previous').addEventListener('click', () => turnPage(-1));
  $('#page-next').addEventListener('click', () => turnPage(1));
  $('#refresh').addEventListener('click', () => render());
  $('#auto-refresh').addEventListener('change', (change) => setAutoRefresh(change.currentTarget.checked));
  $('#endpoint-form').addEventListener('submit', onSaveEndpoint);
  $('#generate-secret').addEventListener('click', generateSecret);
  window.addEventListener('hashchange', onHashChange);

  restoreTokens();
  if (session.tokens) {
    try {
      info = await api('GET', '/admin/api/info');
      fillChoices();
      $('#session-user').textContent = info.username;
    } catch {
      forgetSession();
    }
  }
  const route = parseRoute();
  if (route.view === 'events') lastListRoute = route;
  void render();
}

void start();
