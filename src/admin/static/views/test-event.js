// A test event (on the endpoint view): a sample of the chosen type, sent to the saved endpoint.

import { $, h } from '../dom.js';
import { ApiError } from '../http.js';
import { handleError } from '../router.js';
import { api, signedInInfo } from '../session.js';

/** @import { TestEventCreated, WebhookEndpoint } from '../api-types' */

/** @param {SubmitEvent} submit */
async function onSendTestEvent(submit) {
  submit.preventDefault();
  const form = /** @type {HTMLFormElement} */ (submit.currentTarget);
  const button = $('#send-test-event', HTMLButtonElement);
  const result = $('#test-event-result');
  button.disabled = true;
  result.hidden = true;
  try {
    /** @type {TestEventCreated} */
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

/**
 * A test event goes to the saved endpoint: there must be one, switched on.
 * @param {WebhookEndpoint} endpoint
 */
export function offerTestEvent(endpoint) {
  const button = $('#send-test-event', HTMLButtonElement);
  button.disabled = !endpoint.configured || !endpoint.active;
  button.title = endpoint.configured && endpoint.active ? '' : 'Erst einen aktiven Endpunkt speichern';
}

/** The event types to choose from, as the server lists them. */
export function fillTestEventChoices() {
  $('#test-event-form', HTMLFormElement).event.replaceChildren(...signedInInfo().event_types.map((type) => h('option', { value: type }, type)));
}

export function setUpTestEvent() {
  $('#test-event-form').addEventListener('submit', (submit) => void onSendTestEvent(submit));
}
