// Pieces more than one view shows: an event's badges, the link to a workflow, facts and figures.

import { h } from './dom.js';
import { info } from './session.js';

export function statusBadge(event) {
  const known = info.statuses.some((status) => status.value === event.status);
  return h('span', { class: `badge status-${known ? event.status : 'unknown'}` }, event.status_label);
}

/** Beside the status: a delivery that should have moved on and has not (docs/admin.md#stuck-events). */
export const stuckBadge = (event) =>
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

/** Attempts with an outcome, and beside them the interrupted ones (docs/admin.md, "Interrupted attempts"). */
export const attemptCount = (event) =>
  event.interrupted_attempts > 0 ? `${event.attempts} (+${event.interrupted_attempts} unterbrochen)` : String(event.attempts);

export const testBadge = (event) => (event.test ? h('span', { class: 'badge test', title: 'Testereignis (webhook-test: 1)' }, 'Test') : null);

export function temporalLink(workflowId, id = 'temporal-link') {
  const base = info.temporal_ui_url;
  if (!base || !/^https?:\/\//i.test(base)) return null;
  const href = `${base}/namespaces/${encodeURIComponent(info.temporal_namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return h('a', { href, target: '_blank', rel: 'noopener noreferrer', class: 'button', id }, 'Workflow in Temporal UI ↗');
}

export function field(label, value) {
  return [h('dt', {}, label), h('dd', {}, value)];
}

export function stat(label, value, className = '') {
  return h('dl', { class: `stat ${className}` }, h('dt', {}, label), h('dd', {}, value));
}

/** A checkbox per event type, named `events`, as the server lists them. */
export const eventTypeChecks = () =>
  info.event_types.map((type) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'events', value: type }), h('code', {}, type)));
