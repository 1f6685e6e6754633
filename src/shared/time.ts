import { DateTime } from 'luxon';

/** Swiss local time: what v1 payloads and the v1/v2 API show, with the offset of that date (+01:00 or +02:00). */
export const SWISS_ZONE = 'Europe/Zurich';

export type TimestampStyle = 'swiss-local' | 'utc';

/**
 * `2025-07-15T12:30:00+02:00` (swiss-local) or `2025-07-15T10:30:00Z` (utc), truncated to the second as in the
 * spec's examples, so that the same instant always renders to the same text.
 */
export function formatTimestamp(instant: Date, style: TimestampStyle): string {
  return DateTime.fromJSDate(instant, { zone: style === 'utc' ? 'utc' : SWISS_ZONE })
    .startOf('second')
    .toISO({ suppressMilliseconds: true })!;
}
