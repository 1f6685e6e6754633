// The events list (#/events): filters, search by transaction id, number or e-mail, created range, pages.

import { $, dash, h } from '../dom.js';
import { fromZurichInput, shortTimeFormat, snippet, time, toZurichInput } from '../format.js';
import { ApiError } from '../http.js';
import { attemptCount, statusBadge, stuckBadge, testBadge } from '../parts.js';
import { eventsHash, isCurrent, LIST_KEYS, parseRoute, SEARCH_KEYS, showView } from '../router.js';
import { api, signedInInfo } from '../session.js';

/**
 * @import { WebhookEventPage } from '../api-types'
 * @import { ListRoute } from '../router.js'
 */

const PAGE_SIZE = 20;

/**
 * @param {ListRoute} route
 * @param {number} mine
 */
export async function renderEvents(route, mine) {
  const params = new URLSearchParams({ page: String(route.page), page_size: String(PAGE_SIZE) });
  for (const key of LIST_KEYS) if (route[key]) params.set(key, route[key]);
  /** @type {WebhookEventPage} */
  let data;
  try {
    data = await api('GET', `/admin/api/webhook-events?${params}`);
  } catch (err) {
    // A page that no longer exists (fewer events under a filter): back to the first one.
    if (err instanceof ApiError && err.status === 404 && route.page > 1 && isCurrent(mine)) {
      location.hash = eventsHash({ ...route, page: 1 });
      return;
    }
    throw err;
  }
  if (!isCurrent(mine)) return;

  const filters = $('#filters', HTMLFormElement);
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
      h('td', { class: 'num' }, attemptCount(event)),
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
  $('#page-previous', HTMLButtonElement).disabled = !data.previous;
  $('#page-next', HTMLButtonElement).disabled = !data.next;
  showView('events');
}

/** The list as the filters and the search form say now: a change of either applies what is typed in the other. */
function listRouteFromForms() {
  const filters = $('#filters', HTMLFormElement);
  const search = $('#search', HTMLFormElement);
  /** @type {ListRoute} */
  const route = { view: 'events', page: 1, status: filters.status.value, event: filters.event.value, stuck: filters.stuck.checked ? 'true' : '' };
  const term = search.term.value.trim();
  const by = SEARCH_KEYS.find((key) => key === search.by.value);
  if (term && by) route[by] = term;
  route.created_from = fromZurichInput(search.created_from.value);
  route.created_to = fromZurichInput(search.created_to.value);
  return route;
}

function onFilterChange() {
  location.hash = eventsHash(listRouteFromForms());
}

/**
 * The search form as the route says (the list's address holds the search, so it can be bookmarked).
 * @param {ListRoute} route
 */
function fillSearch(route) {
  const form = $('#search', HTMLFormElement);
  // Without a search in the address, the field keeps what it searches by.
  const by = SEARCH_KEYS.find((key) => route[key]);
  if (by) form.by.value = by;
  form.term.value = by ? route[by] : '';
  form.created_from.value = toZurichInput(route.created_from);
  form.created_to.value = toZurichInput(route.created_to);
}

/** @param {SubmitEvent} submit */
function onSearch(submit) {
  submit.preventDefault();
  location.hash = eventsHash(listRouteFromForms());
}

function resetSearch() {
  const route = parseRoute();
  if (route.view !== 'events') return;
  const { status, event, stuck } = route;
  $('#search', HTMLFormElement).reset();
  location.hash = eventsHash({ view: 'events', status, event, stuck, page: 1 });
}

/** @param {1 | -1} step */
function turnPage(step) {
  const route = parseRoute();
  if (route.view !== 'events') return;
  location.hash = eventsHash({ ...route, page: route.page + step });
}

/** The filters' choices, as the server lists them. */
export function fillEventFilters() {
  const all = () => h('option', { value: '' }, 'Alle');
  const info = signedInInfo();
  const filters = $('#filters', HTMLFormElement);
  filters.status.replaceChildren(all(), ...info.statuses.map((s) => h('option', { value: s.value }, s.label)));
  filters.event.replaceChildren(all(), ...info.event_types.map((type) => h('option', { value: type }, type)));
}

export function setUpEventsView() {
  $('#filters').addEventListener('change', onFilterChange);
  $('#filters').addEventListener('submit', (submit) => submit.preventDefault());
  $('#search').addEventListener('submit', onSearch);
  $('#search-reset').addEventListener('click', resetSearch);
  $('#page-previous').addEventListener('click', () => turnPage(-1));
  $('#page-next').addEventListener('click', () => turnPage(1));
}
