// The failing endpoint's banner, above every view: shown while every delivery attempt has failed for
// ENDPOINT_FAILING_AFTER_MINUTES (the rule of the metric webhook_endpoint_failing and its alert), with the last
// success and the last error, so that whoever opens the page sees it before any list.

import { $, h } from './dom.js';
import { shortTimeFormat, snippet, time } from './format.js';
import { api } from './session.js';

/** @import { EndpointFailing } from './api-types' */

/** @param {NonNullable<EndpointFailing['last_failure']>} failure */
function lastError(failure) {
  const answer = failure.response_code === null ? failure.error ?? 'keine Antwort' : `HTTP ${failure.response_code}`;
  const body = snippet(failure.response_body_excerpt);
  return [h('strong', {}, answer), body && ' – ', body && h('code', {}, body), ' (', time(failure.started_at, shortTimeFormat), ')'];
}

/** @param {EndpointFailing} status */
function bannerContent(status) {
  /** @type {HTMLElement[]} */
  const parts = [
    h('strong', { class: 'banner-title' }, `Der Endpunkt schlägt seit mehr als ${status.failing_after_minutes} Minuten fehl`),
    h(
      'p',
      {},
      'Seit ',
      time(status.failing_since, shortTimeFormat),
      ' ist jeder Zustellversuch fehlgeschlagen. Letzte erfolgreiche Zustellung: ',
      status.last_success_at ? time(status.last_success_at, shortTimeFormat) : 'noch nie',
      '.',
    ),
  ];
  if (status.last_failure) parts.push(h('p', {}, 'Letzter Fehler: ', lastError(status.last_failure)));
  parts.push(
    h(
      'p',
      { class: 'muted' },
      'Die Versuche laufen weiter; nichts wird abgeschaltet. Den Empfänger prüfen (Adresse, Zugangsdaten, Erreichbarkeit), ',
      'dann mit einem Testereignis bestätigen; Ereignisse mit „Maximale Wiederholungen erreicht“ über die Wiederherstellung erneut senden.',
    ),
  );
  return parts;
}

/** Reads whether the endpoint is failing and shows or hides the banner; a failed read leaves it as it is (the view reports errors). */
export async function refreshFailingBanner() {
  /** @type {EndpointFailing} */
  let status;
  try {
    status = await api('GET', '/admin/api/endpoint-failing');
  } catch {
    return;
  }
  const banner = $('#failing-banner');
  banner.replaceChildren(...(status.failing ? bannerContent(status) : []));
  banner.hidden = !status.failing;
}

/** Signed out: nothing of the endpoint shows. */
export function hideFailingBanner() {
  const banner = $('#failing-banner');
  banner.hidden = true;
  banner.replaceChildren();
}
