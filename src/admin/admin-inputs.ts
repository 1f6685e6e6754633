import { DateTime } from 'luxon';
import { z } from 'zod';
import { yearMonthDayPattern } from '../shared/calendar-patterns';
import { WEBHOOK_EVENT_TYPES } from '../webhooks/event-types';

/* Input values the admin API's searches, the recovery and the health view share; each message names its field. */

const EARLIEST_YEAR = 2000;
// Hours 00–23 and offsets within a day: luxon alone would take `T24:00` and `+99:99`.
const TIME = '(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]{1,3})?)?';
const OFFSET = '(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])';
/** ISO 8601 with seconds optional and the offset required: `2025-07-15T08:00:00Z`, `2025-07-15T10:00+02:00`. */
const ISO_INSTANT = new RegExp(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T${TIME}${OFFSET}$`);
/** The document's pattern: the same spellings, of real days only, so that whatever it admits the server takes. */
const REAL_INSTANT = `^${yearMonthDayPattern(EARLIEST_YEAR)}T${TIME}${OFFSET}$`;

/**
 * An instant as written in a query or a body, with its offset (no zone is guessed); a real date and time. Query
 * messages name the parameter; body messages are prefixed with the field by the input parser. `meaning` opens the
 * description.
 */
export function instant({ name, meaning }: { name?: string; meaning: string }) {
  const subject = name ? `${name} ` : '';
  return z
    .string({ error: `${subject}must be given once, as an ISO 8601 time with offset` })
    .regex(ISO_INSTANT, { error: `${subject}must be an ISO 8601 time with offset, e.g. 2025-07-15T08:00:00Z`, abort: true })
    .transform((text) => DateTime.fromISO(text, { setZone: true }))
    .refine((time) => time.isValid && time.year >= EARLIEST_YEAR, { error: `${subject}must be a real date and time` })
    .transform((time) => time.toJSDate())
    // No `format: date-time`: RFC 3339 takes spellings refused here (`t`, `z`, a leap second) and needs the seconds.
    .meta({
      pattern: REAL_INSTANT,
      description: `${meaning}: ISO 8601 with offset (seconds optional), a real date and time of the years ${EARLIEST_YEAR} to 9999`,
      example: '2025-07-15T08:00:00Z',
    });
}

/** A text query parameter: given once, not empty, not longer than `max`. */
export function textParam(name: string, max: number) {
  return z
    .string({ error: `${name} must be given once` })
    .min(1, { error: `${name} must not be empty` })
    .max(max, { error: `${name} must be at most ${max} characters` })
    // Postgres text cannot hold NUL: refused here rather than failing the query.
    .refine((text) => !text.includes('\u0000'), { error: `${name} must not contain NUL characters` });
}

export const eventType = (name?: string) =>
  z.enum(WEBHOOK_EVENT_TYPES, { error: `${name ? `${name} ` : ''}must be one of ${WEBHOOK_EVENT_TYPES.join(', ')}` });

/** `created_from` (inclusive) before `created_to` (exclusive), when both are given. */
export const createdRangeInOrder = (range: { created_from?: Date; created_to?: Date }) =>
  !range.created_from || !range.created_to || range.created_from < range.created_to;

export const CREATED_RANGE_ORDER = { error: 'created_from must be before created_to', path: ['created_to'] };
