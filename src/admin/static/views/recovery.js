// Bulk recovery (#/recovery, #/recovery/<id>): a preview of what would be resent, the start, and its progress.

import { $, dash, h, inputs, showFormError } from '../dom.js';
import { fromZurichInput, number, shortTimeFormat, time } from '../format.js';
import { ApiError } from '../http.js';
import { eventTypeChecks, field, stat, temporalLink } from '../parts.js';
import { handleError, isCurrent, render, showView } from '../router.js';
import { api } from '../session.js';

/**
 * @import { Recovery, RecoveryPreview } from '../api-types'
 * @typedef {{ created_from: string, created_to: string, events: string[] }} RecoveryFilter
 */

const RECOVERY_POLL_MS = 1_000;

/**
 * The preview shown, with the idempotency key its start uses: a double click or a retried start starts one recovery.
 * @type {{ filter: RecoveryFilter, key: string } | null}
 */
let recoveryPreview = null;
/** @type {number | undefined} */
let recoveryTimer;

const RECOVERY_STATUS_LABELS = {
  running: 'Läuft',
  completed: 'Abgeschlossen',
  failed: 'Fehlgeschlagen',
  cancelled: 'Abgebrochen',
  terminated: 'Beendet',
  timed_out: 'Zeit abgelaufen',
};

/**
 * @param {HTMLFormElement} form
 * @returns {RecoveryFilter}
 */
function recoveryFilter(form) {
  return {
    created_from: fromZurichInput(form.created_from.value),
    created_to: fromZurichInput(form.created_to.value),
    events: inputs(form, '[name=events]:checked').map((box) => box.value),
  };
}

const showRecoveryError = (/** @type {string} */ message) => showFormError('#recovery-error', message);

function forgetRecoveryPreview() {
  recoveryPreview = null;
  $('#recovery-preview').hidden = true;
}

/** @param {SubmitEvent} submit */
async function onRecoveryPreview(submit) {
  submit.preventDefault();
  const form = /** @type {HTMLFormElement} */ (submit.currentTarget);
  forgetRecoveryPreview();
  showRecoveryError('');
  const filter = recoveryFilter(form);
  if (!filter.created_from || !filter.created_to) return showRecoveryError('Beginn und Ende des Zeitraums angeben.');
  try {
    /** @type {RecoveryPreview} */
    const preview = await api('POST', '/admin/api/recoveries/preview', filter);
    recoveryPreview = { filter, key: crypto.randomUUID() };
    const { failed, max_retries_reached: exhausted } = preview.by_status;
    $('#recovery-count').textContent =
      preview.count === 0
        ? 'Keine Ereignisse in diesem Zeitraum sind fehlgeschlagen.'
        : `${preview.count} ${preview.count === 1 ? 'Ereignis wird' : 'Ereignisse werden'} erneut gesendet: ${failed} fehlgeschlagen, ${exhausted} mit maximalen Wiederholungen.`;
    const start = $('#recovery-start', HTMLButtonElement);
    start.textContent = `${preview.count} ${preview.count === 1 ? 'Ereignis' : 'Ereignisse'} erneut senden`;
    start.disabled = preview.count === 0;
    start.hidden = preview.count === 0;
    $('#recovery-preview').hidden = false;
  } catch (err) {
    if (err instanceof ApiError && err.status === 400) showRecoveryError(`Ungültig: ${err.message}`);
    else handleError(err);
  }
}

/** @param {MouseEvent} click */
async function onRecoveryStart(click) {
  if (!recoveryPreview) return;
  const button = /** @type {HTMLButtonElement} */ (click.currentTarget);
  button.disabled = true;
  try {
    /** @type {Recovery} */
    const recovery = await api('POST', '/admin/api/recoveries', { ...recoveryPreview.filter, idempotency_key: recoveryPreview.key });
    forgetRecoveryPreview();
    location.hash = `#/recovery/${recovery.id}`;
  } catch (err) {
    button.disabled = false;
    handleError(err);
  }
}

/**
 * @param {{ view: 'recovery', id: string | null }} route
 * @param {number} mine
 */
export async function renderRecovery(route, mine) {
  clearTimeout(recoveryTimer);
  const form = $('#recovery-form');
  const progress = $('#recovery-progress');
  form.hidden = Boolean(route.id);
  progress.hidden = !route.id;
  if (!route.id) {
    showView('recovery');
    return;
  }
  /** @type {Recovery} */
  const recovery = await api('GET', `/admin/api/recoveries/${route.id}`);
  if (!isCurrent(mine)) return;
  progress.replaceChildren(recoveryCard(recovery));
  showView('recovery');
  if (recovery.status === 'running' || !recovery.progress) {
    recoveryTimer = setTimeout(() => {
      if (isCurrent(mine)) void render();
    }, RECOVERY_POLL_MS);
  }
}

/** @param {Recovery} recovery */
function recoveryCard(recovery) {
  const counts = recovery.progress;
  const count = (/** @type {'delivered' | 'failed' | 'skipped' | 'unconfirmed'} */ key) => (counts ? number.format(counts[key]) : dash());
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

/** The event types to choose from, as the server lists them. */
export function fillRecoveryChoices() {
  $('#recovery-events').replaceChildren(...eventTypeChecks());
}

export function setUpRecoveryView() {
  $('#recovery-form').addEventListener('submit', (submit) => void onRecoveryPreview(submit));
  $('#recovery-form').addEventListener('input', forgetRecoveryPreview);
  $('#recovery-start').addEventListener('click', (click) => void onRecoveryStart(click));
}
