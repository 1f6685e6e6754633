// How the page writes times and numbers. Operators read Swiss local time, whatever the browser's zone; the exact
// UTC value from the API shows on hover.

import { dash, h } from './dom.js';

const SNIPPET_LENGTH = 80;

/** @param {Intl.DateTimeFormatOptions} options */
export const zurich = (options) => new Intl.DateTimeFormat('de-CH', { timeZone: 'Europe/Zurich', ...options });
export const timeFormat = zurich({ dateStyle: 'medium', timeStyle: 'medium' });
export const shortTimeFormat = zurich({ dateStyle: 'medium', timeStyle: 'short' });
export const number = new Intl.NumberFormat('de-CH');

// datetime-local fields are read and filled in Swiss time too; the API gets UTC.
const wallClockParts = new Intl.DateTimeFormat('en-CA', {
  timeZone: 'Europe/Zurich',
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

/**
 * `2025-07-15T10:30`: the Swiss wall clock at an instant, as a datetime-local field shows it.
 * @param {number} ms
 */
function zurichWallClock(ms) {
  const part = Object.fromEntries(wallClockParts.formatToParts(ms).map(({ type, value }) => [type, value]));
  return `${part.year}-${part.month}-${part.day}T${part.hour}:${part.minute}`;
}

/**
 * A datetime-local value read as Swiss time, as UTC ISO text; '' for an empty or incomplete field.
 * @param {string} value
 */
export function fromZurichInput(value) {
  const match = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})$/.exec(value);
  if (!match) return '';
  const wall = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]), Number(match[4]), Number(match[5]));
  // The offset depends on the instant sought: two corrections settle it, also next to a change of summer time.
  let instant = wall;
  for (let round = 0; round < 2; round++) instant += wall - Date.parse(`${zurichWallClock(instant)}:00Z`);
  return new Date(instant).toISOString().replace('.000Z', 'Z');
}

/** @param {string | null | undefined} iso */
export const toZurichInput = (iso) => (iso ? zurichWallClock(Date.parse(iso)) : '');

/**
 * @param {string | null} iso
 * @param {Intl.DateTimeFormat} [format]
 */
export function time(iso, format = timeFormat) {
  if (!iso) return dash();
  return h('time', { datetime: iso, title: iso }, format.format(new Date(iso)));
}

/** @param {string | null} text */
export function snippet(text) {
  if (!text) return '';
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > SNIPPET_LENGTH ? `${oneLine.slice(0, SNIPPET_LENGTH)}…` : oneLine;
}
