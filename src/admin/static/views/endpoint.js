// The webhook endpoint's configuration (#/endpoint). Passwords and secrets are write-only: sent when typed, never shown.

import { $, h, inputs, showFlash } from '../dom.js';
import { timeFormat } from '../format.js';
import { ApiError } from '../http.js';
import { eventTypeChecks } from '../parts.js';
import { handleError, isCurrent, showView } from '../router.js';
import { api, signedInInfo } from '../session.js';
import { offerTestEvent } from './test-event.js';

/**
 * @import { WebhookEndpoint } from '../api-types'
 * @typedef {{ url: string, active: boolean, payload_version: string, events: string[], basic_auth_username?: string | null,
 *   basic_auth_password?: string | null, signing_secret?: string | null }} EndpointChange the request's body
 */

/**
 * The endpoint as last loaded or saved; set before the form shows.
 * @type {WebhookEndpoint | null}
 */
let endpoint = null;

/**
 * @param {{ view: 'endpoint' }} _route
 * @param {number} mine
 */
export async function renderEndpoint(_route, mine) {
  /** @type {WebhookEndpoint} */
  const shown = await api('GET', '/admin/api/webhook-endpoint');
  if (!isCurrent(mine)) return;
  endpoint = shown;
  fillEndpointForm(shown);
  offerTestEvent(shown);
  $('#test-event-result').hidden = true;
  showView('endpoint');
}

/**
 * @param {HTMLElement} chip
 * @param {boolean} isSet
 */
function setState(chip, isSet) {
  chip.textContent = isSet ? 'gesetzt' : 'nicht gesetzt';
  chip.className = `chip ${isSet ? 'on' : 'off'}`;
}

/** @param {WebhookEndpoint} endpoint */
function fillEndpointForm(endpoint) {
  const info = signedInInfo();
  const form = $('#endpoint-form', HTMLFormElement);
  form.reset();
  form.url.value = endpoint.url ?? '';
  form.active.checked = endpoint.active;
  form.payload_version.value = endpoint.payload_version;
  // An endpoint keeps a version it already has, even one that could not be chosen now.
  for (const option of form.payload_version.options) {
    const selectable = info.payload_versions.some((v) => v.value === option.value && v.selectable);
    option.disabled = !selectable && option.value !== endpoint.payload_version;
  }
  for (const box of inputs(form, '[name=events]')) box.checked = endpoint.events.some((type) => type === box.value);
  form.basic_auth_username.value = endpoint.basic_auth_username ?? '';
  form.basic_auth_password.placeholder = endpoint.basic_auth_password_set ? '•••••• (gespeichert)' : '';
  setState($('#password-state'), endpoint.basic_auth_password_set);
  setState($('#secret-state'), endpoint.signing_secret_set);
  $('#remove-secret-label').hidden = !endpoint.signing_secret_set;
  $('#endpoint-new').hidden = endpoint.configured;
  $('#endpoint-updated').textContent = endpoint.updated_at ? `Zuletzt geändert: ${timeFormat.format(new Date(endpoint.updated_at))}` : '';
  $('#endpoint-error').hidden = true;
}

/**
 * The change to send: write-only fields only when something was typed (or removed), so saving keeps them.
 * @param {HTMLFormElement} form
 * @param {WebhookEndpoint} endpoint the endpoint as the form was filled from it
 */
function endpointChange(form, endpoint) {
  /** @type {EndpointChange} */
  const change = {
    url: form.url.value.trim(),
    active: form.active.checked,
    payload_version: form.payload_version.value,
    events: inputs(form, '[name=events]:checked').map((box) => box.value),
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

/** @param {SubmitEvent} submit */
async function onSaveEndpoint(submit) {
  submit.preventDefault();
  if (!endpoint) return;
  const form = /** @type {HTMLFormElement} */ (submit.currentTarget);
  const button = $('button[type=submit]', HTMLButtonElement, form);
  const error = $('#endpoint-error');
  button.disabled = true;
  error.hidden = true;
  $('#flash').hidden = true;
  try {
    /** @type {WebhookEndpoint} */
    const saved = await api('PUT', '/admin/api/webhook-endpoint', endpointChange(form, endpoint));
    endpoint = saved;
    fillEndpointForm(saved);
    offerTestEvent(saved);
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
  const form = $('#endpoint-form', HTMLFormElement);
  form.signing_secret.value = `whsec_${btoa(String.fromCharCode(...bytes))}`;
  form.remove_signing_secret.checked = false;
}

/** The payload versions and event types to choose from, as the server lists them. */
export function fillEndpointChoices() {
  const info = signedInInfo();
  const form = $('#endpoint-form', HTMLFormElement);
  form.payload_version.replaceChildren(
    ...info.payload_versions.map((v) => h('option', { value: v.value }, v.selectable ? v.value : `${v.value} (nur mit Warenkorb)`)),
  );
  $('#version-hint').textContent = info.payload_versions.every((v) => v.selectable)
    ? 'Neue Felder erscheinen erst nach einem Wechsel der Version.'
    : 'v2.1 setzt die Warenkorb-Logik des Spendenshops voraus.';
  $('#endpoint-events').replaceChildren(...eventTypeChecks());
}

export function setUpEndpointView() {
  $('#endpoint-form').addEventListener('submit', (submit) => void onSaveEndpoint(submit));
  $('#generate-secret').addEventListener('click', generateSecret);
}
