// The health view's chart: delivery attempts per hour, delivered and failed stacked, as SVG made with the DOM (no
// library, no build step). Colours come from the style sheet (classes), labels are text nodes.

import { zurich } from './format.js';

/** @import { DeliveryHealth } from './api-types' */

const SVG = 'http://www.w3.org/2000/svg';
const HEIGHT = 220;
const PLOT = { top: 12, right: 12, bottom: 34, left: 44 };

/**
 * @param {string} tag
 * @param {Record<string, string | number>} [attributes]
 * @param {...(Node | string)} children
 */
function svg(tag, attributes = {}, ...children) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, String(value));
  for (const child of children) element.append(child);
  return element;
}

/**
 * 1, 2, 5, 10, 20, 50 … at or above `value`: the top of the scale, so that its half is a round number too.
 * @param {number} value
 */
export function niceMaximum(value) {
  if (value <= 1) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

const hourLabel = zurich({ hour: '2-digit', minute: '2-digit' });
const dayLabel = zurich({ weekday: 'short', day: '2-digit', month: '2-digit' });
const hourParts = zurich({ hour: 'numeric', hourCycle: 'h23' });
/**
 * The hour of the day in Zurich, 0–23 (the formatted text says "15 Uhr"; its part is the number).
 * @param {Date} date
 */
const hourInDay = (date) => Number(hourParts.formatToParts(date).find((part) => part.type === 'hour')?.value);
const tooltipTime = zurich({ day: '2-digit', month: '2-digit', hour: '2-digit', minute: '2-digit' });

/**
 * `hours`: [{start (ISO), delivered, failed}], oldest first, one per hour. Labels the hours every three hours (24
 * bars) or each day at midnight (168 bars), Swiss time. Each bar has a tooltip with its numbers.
 * @param {DeliveryHealth['hours']} hours
 * @param {{ width?: number }} [options]
 */
export function deliveryChart(hours, { width = 1000 } = {}) {
  const plotWidth = width - PLOT.left - PLOT.right;
  const plotHeight = HEIGHT - PLOT.top - PLOT.bottom;
  const top = niceMaximum(Math.max(0, ...hours.map((hour) => hour.delivered + hour.failed)));
  const slot = plotWidth / Math.max(1, hours.length);
  const barWidth = Math.max(1, slot * (hours.length > 48 ? 0.8 : 0.7));
  const y = (/** @type {number} */ count) => PLOT.top + plotHeight - (count / top) * plotHeight;
  const daily = hours.length > 48;

  const chart = svg('svg', {
    class: 'chart',
    viewBox: `0 0 ${width} ${HEIGHT}`,
    role: 'img',
    'aria-label': `Zustellversuche pro Stunde, ${hours.length} Stunden`,
  });
  for (const value of [0, top / 2, top]) {
    chart.append(
      svg('line', { class: 'grid', x1: PLOT.left, x2: width - PLOT.right, y1: y(value), y2: y(value) }),
      svg('text', { class: 'axis', x: PLOT.left - 8, y: y(value) + 4, 'text-anchor': 'end' }, String(value)),
    );
  }
  hours.forEach((hour, index) => {
    const start = new Date(hour.start);
    const x = PLOT.left + index * slot + (slot - barWidth) / 2;
    const total = hour.delivered + hour.failed;
    const bar = svg(
      'g',
      { class: 'bar' },
      svg('title', {}, `${tooltipTime.format(start)}: ${hour.delivered} zugestellt, ${hour.failed} fehlgeschlagen`),
      // A transparent column, so that the tooltip also shows over an empty hour.
      svg('rect', { class: 'hover', x: PLOT.left + index * slot, y: PLOT.top, width: slot, height: plotHeight }),
    );
    if (hour.delivered > 0) {
      bar.append(svg('rect', { class: 'delivered', x, y: y(hour.delivered), width: barWidth, height: y(0) - y(hour.delivered) }));
    }
    if (hour.failed > 0) {
      bar.append(svg('rect', { class: 'failed', x, y: y(total), width: barWidth, height: y(hour.delivered) - y(total) }));
    }
    chart.append(bar);
    const hourOfDay = hourInDay(start);
    const labelled = daily ? hourOfDay === 0 : hourOfDay % 3 === 0;
    if (labelled) {
      const label = daily ? dayLabel.format(start) : hourLabel.format(start);
      chart.append(
        svg('line', { class: 'tick', x1: PLOT.left + index * slot, x2: PLOT.left + index * slot, y1: y(0), y2: y(0) + 4 }),
        svg('text', { class: 'axis', x: PLOT.left + index * slot, y: HEIGHT - PLOT.bottom + 18, 'text-anchor': daily ? 'start' : 'middle' }, label),
      );
    }
  });
  chart.append(svg('line', { class: 'baseline', x1: PLOT.left, x2: width - PLOT.right, y1: y(0), y2: y(0) }));
  return chart;
}
