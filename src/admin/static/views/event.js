// One event (#/events/<id>): its facts, every attempt, the payload, the resend and its follow-up.

import { $, dash, h, showFlash } from '../dom.js';
import { time } from '../format.js';
import { attemptCount, field, statusBadge, stuckBadge, temporalLink, testBadge } from '../parts.js';
import { eventsHash, handleError, isCurrent, lastListRoute, render, showView } from '../router.js';
import { api } from '../session.js';

/** @import { ResendAccepted, WebhookEventDetail } from '../api-types' */

const FOLLOW_UP_MS = 1_000;
const FOLLOW_UP_ROUNDS = 30;
const RESENDABLE = ['failed', 'max_retries_reached'];
const OUTCOME_LABELS = { delivered: 'Zugestellt', failed: 'Fehlgeschlagen' };

/**
 * An attempt's result: its outcome, or why there is none (docs/admin.md#interrupted-attempts).
 * @param {WebhookEventDetail['delivery_attempts'][number]} attempt
 */
function outcomeBadge(attempt) {
  if (attempt.outcome) return h('span', { class: `badge outcome-${attempt.outcome}` }, OUTCOME_LABELS[attempt.outcome] ?? attempt.outcome);
  if (!attempt.interrupted) return h('span', { class: 'badge outcome-running' }, 'Läuft');
  const title = 'Der Worker fiel nach dem Start aus, bevor das Ergebnis festgehalten war: der Empfänger hat die Anfrage vielleicht erhalten. Zählt nicht zu den fünf Versuchen.';
  return h('span', { class: 'badge outcome-interrupted', title }, 'Unterbrochen – Ergebnis unbekannt');
}

/** @param {string | null} text */
function block(text) {
  return text ? h('pre', { class: 'block' }, text) : dash();
}

/**
 * @param {{ view: 'event', id: string }} route
 * @param {number} mine
 */
export async function renderEvent(route, mine) {
  /** @type {WebhookEventDetail} */
  const event = await api('GET', `/admin/api/webhook-events/${route.id}`);
  if (!isCurrent(mine)) return;
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
      onclick: () => void resend(event, resendButton, mine),
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
      h('td', { class: 'num' }, attempt.duration_ms === null ? dash() : `${attempt.duration_ms} ms`),
      h('td', {}, outcomeBadge(attempt)),
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
        field('Versuche', attemptCount(event)),
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
      : h('pre', { class: 'block payload', id: 'payload' }, event.payload_is_json ? JSON.stringify(event.payload, null, 2) : String(event.payload)),
  );
  showView('event');
}

/**
 * @param {WebhookEventDetail} event
 * @param {HTMLButtonElement} button
 * @param {number} mine
 */
async function resend(event, button, mine) {
  button.disabled = true;
  try {
    /** @type {ResendAccepted} */
    const answer = await api('POST', `/admin/api/webhook-events/${event.id}/resend`);
    showFlash('success', `Erneuter Versand angestossen (Workflow ${answer.workflow_id}).`);
    followUp(event.id, event.attempts, FOLLOW_UP_ROUNDS, mine);
  } catch (err) {
    handleError(err);
    button.disabled = false;
  }
}

/**
 * After a resend, looks again every second until the attempt shows up (or gives up after half a minute). Anything
 * the page renders meanwhile (another view, a reload of this one) ends it: the render's ticket is no longer `mine`.
 * @param {number} id
 * @param {number} attemptsBefore
 * @param {number} rounds
 * @param {number} mine
 */
function followUp(id, attemptsBefore, rounds, mine) {
  setTimeout(() => void lookAgain(id, attemptsBefore, rounds, mine), FOLLOW_UP_MS);
}

/**
 * @param {number} id
 * @param {number} attemptsBefore
 * @param {number} rounds
 * @param {number} mine
 */
async function lookAgain(id, attemptsBefore, rounds, mine) {
  if (!isCurrent(mine)) return;
  try {
    /** @type {WebhookEventDetail} */
    const current = await api('GET', `/admin/api/webhook-events/${id}`);
    if (!isCurrent(mine)) return;
    if (current.attempts > attemptsBefore || rounds <= 1) await render();
    else followUp(id, attemptsBefore, rounds - 1, mine);
  } catch (err) {
    handleError(err);
  }
}
