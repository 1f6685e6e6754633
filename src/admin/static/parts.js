// Pieces more than one view shows: an event's badges, the link to a workflow, facts and figures.

import { h } from './dom.js';
import { signedInInfo } from './session.js';

/**
 * @import { WebhookEventSummary } from './api-types'
 * @import { Child } from './dom.js'
 */

/** @param {WebhookEventSummary} event */
export function statusBadge(event) {
  const info = signedInInfo();
  const known = info.statuses.some((status) => status.value === event.status);
  return h('span', { class: `badge status-${known ? event.status : 'unknown'}` }, event.status_label);
}

/**
 * Beside the status: a delivery that should have moved on and has not (docs/admin.md#stuck-events).
 * @param {WebhookEventSummary} event
 */
export const stuckBadge = (event) =>
  event.stuck
    ? h(
        'span',
        {
          class: 'badge stuck',
          title: `Seit mehr als ${signedInInfo().stuck_after_minutes} Minuten fällig und kein Versuch: Worker, Temporal oder Datenbank prüfen`,
        },
        'Hängt fest',
      )
    : null;

/**
 * Attempts with an outcome, and beside them the interrupted ones (docs/admin.md#interrupted-attempts).
 * @param {WebhookEventSummary} event
 */
export const attemptCount = (event) =>
  event.interrupted_attempts > 0 ? `${event.attempts} (+${event.interrupted_attempts} unterbrochen)` : String(event.attempts);

/** @param {WebhookEventSummary} event */
export const testBadge = (event) => (event.test ? h('span', { class: 'badge test', title: 'Testereignis (webhook-test: 1)' }, 'Test') : null);

/**
 * @param {string} workflowId
 * @param {string} [id] the link's element id
 */
export function temporalLink(workflowId, id = 'temporal-link') {
  const info = signedInInfo();
  const base = info.temporal_ui_url;
  if (!base || !/^https?:\/\//i.test(base)) return null;
  const href = `${base}/namespaces/${encodeURIComponent(info.temporal_namespace)}/workflows/${encodeURIComponent(workflowId)}`;
  return h('a', { href, target: '_blank', rel: 'noopener noreferrer', class: 'button', id }, 'Workflow in Temporal UI ↗');
}

/**
 * @param {string} label
 * @param {Child | Child[]} value
 */
export function field(label, value) {
  return [h('dt', {}, label), h('dd', {}, value)];
}

/**
 * @param {string} label
 * @param {Child | Child[]} value
 * @param {string} [className]
 */
export function stat(label, value, className = '') {
  return h('dl', { class: `stat ${className}` }, h('dt', {}, label), h('dd', {}, value));
}

/** A checkbox per event type, named `events`, as the server lists them. */
export const eventTypeChecks = () =>
  signedInInfo().event_types.map((type) => h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'events', value: type }), h('code', {}, type)));
