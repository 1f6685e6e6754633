import { DateTime } from 'luxon';

/** Swiss local time: what v1 payloads and the v1/v2 API show, with the offset of that date (+01:00 or +02:00). */
export const SWISS_ZONE = 'Europe/Zurich';

export type TimestampStyle = 'swiss-local' | 'utc';

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;

function formatWithLuxon(instant: Date, style: TimestampStyle): string {
  return DateTime.fromJSDate(instant, { zone: style === 'utc' ? 'utc' : SWISS_ZONE })
    .startOf('second')
    .toISO({ suppressMilliseconds: true })!;
}

/**
 * The Swiss offset in minutes of each UTC hour seen so far. Asking the zone (luxon → Intl) for every timestamp took
 * 40 % of the CPU of a large v1 donations list (BENCHMARKS.md); the offset changes only on whole UTC hours (01:00 UTC
 * since 1981), so one answer serves the hour. An hour whose start and end differ (the 1853 and 1894 changes of
 * local mean time) keeps `null` and goes through luxon each time.
 */
const swissOffsetByHour = new Map<number, number | null>();
const MAX_CACHED_HOURS = 200_000; // some 23 years of distinct hours, a few MB at most

function swissOffsetMinutes(ms: number): number | null {
  const hour = Math.floor(ms / HOUR_MS);
  let offset = swissOffsetByHour.get(hour);
  if (offset === undefined) {
    const atStart = DateTime.fromMillis(hour * HOUR_MS, { zone: SWISS_ZONE }).offset;
    const atEnd = DateTime.fromMillis((hour + 1) * HOUR_MS - 1, { zone: SWISS_ZONE }).offset;
    offset = atStart === atEnd && Number.isInteger(atStart) ? atStart : null;
    if (swissOffsetByHour.size >= MAX_CACHED_HOURS) swissOffsetByHour.clear();
    swissOffsetByHour.set(hour, offset);
  }
  return offset;
}

const twoDigits = (value: number) => String(value).padStart(2, '0');

/**
 * `2025-07-15T12:30:00+02:00` (swiss-local) or `2025-07-15T10:30:00Z` (utc), truncated to the second as in the
 * spec's examples, so that the same instant always renders to the same text. The text is luxon's ISO format; it is
 * written by hand for four-digit years (an invalid date or another year takes luxon's own path).
 */
export function formatTimestamp(instant: Date, style: TimestampStyle): string {
  const ms = instant.getTime();
  const offset = Number.isNaN(ms) ? null : style === 'utc' ? 0 : swissOffsetMinutes(ms);
  if (offset === null) return formatWithLuxon(instant, style);
  const local = new Date(ms + offset * MINUTE_MS);
  const year = local.getUTCFullYear();
  if (year < 1000 || year > 9999) return formatWithLuxon(instant, style);
  const text = local.toISOString().slice(0, 19); // yyyy-MM-ddTHH:mm:ss, the milliseconds cut off
  if (style === 'utc') return `${text}Z`;
  const sign = offset < 0 ? '-' : '+';
  return `${text}${sign}${twoDigits(Math.floor(Math.abs(offset) / 60))}:${twoDigits(Math.abs(offset) % 60)}`;
}
