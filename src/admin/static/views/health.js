// Delivery health (#/health?window=24h|7d): attempts per hour as a chart, with the figures above it.

import { deliveryChart } from '../chart.js';
import { $, dash, h } from '../dom.js';
import { number, shortTimeFormat, time } from '../format.js';
import { stat } from '../parts.js';
import { isCurrent, showView } from '../router.js';
import { api } from '../session.js';

/** @import { DeliveryHealth } from '../api-types' */

const percent = new Intl.NumberFormat('de-CH', { style: 'percent', maximumFractionDigits: 1 });
const seconds = new Intl.NumberFormat('de-CH', { minimumFractionDigits: 1, maximumFractionDigits: 1 });

/**
 * @param {{ view: 'health', window: '24h' | '7d' }} route
 * @param {number} mine
 */
export async function renderHealth(route, mine) {
  /** @type {DeliveryHealth} */
  const data = await api('GET', `/admin/api/delivery-health?window=${route.window}`);
  if (!isCurrent(mine)) return;
  for (const link of document.querySelectorAll('#health-view .segmented a')) {
    if (!(link instanceof HTMLElement)) continue;
    link.setAttribute('aria-current', String(link.dataset.window === route.window));
  }
  $('#health-range').textContent = `seit ${shortTimeFormat.format(new Date(data.from))}`;
  const rate = data.success_rate;
  const ms = (/** @type {number | null} */ value) => (value === null ? dash() : value < 1000 ? `${number.format(value)} ms` : `${seconds.format(value / 1000)} s`);
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
