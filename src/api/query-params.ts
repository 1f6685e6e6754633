import { DateTime } from 'luxon';
import { z } from 'zod';
import { SWISS_ZONE } from '../shared/time';
import { environmentValues } from './versions/schemas';

/*
 * Query parameter schemas, shared by request validation and the OpenAPI document. Every message names its
 * parameter, because the first one is what the client reads in the 400 body.
 */

const DATE_FORMAT = 'MM-dd-yyyy';
const DATE_SHAPE = /^\d{2}-\d{2}-\d{4}$/;
export const BOTH_DATES_REQUIRED = 'Both dateFrom and dateTo are required, in the format MM-DD-YYYY';

/** The start of a MM-DD-YYYY day in Europe/Zurich, or undefined when it is not a real calendar date. */
export function swissDay(value: string): DateTime | undefined {
  if (!DATE_SHAPE.test(value)) return undefined;
  const day = DateTime.fromFormat(value, DATE_FORMAT, { zone: SWISS_ZONE });
  // Years before 1000 would not be four digits back out; nothing in this business happened then anyway.
  return day.isValid && day.year >= 1000 ? day : undefined;
}

/** Whole Swiss days, both ends inclusive, as a half-open instant range [start, end). */
export function swissDayRange(from: string, to: string): { start: Date; end: Date } {
  return {
    start: swissDay(from)!.toJSDate(),
    end: swissDay(to)!.plus({ days: 1 }).startOf('day').toJSDate(),
  };
}

export function dateParam(name: string, { missing = `${name} is required` }: { missing?: string } = {}) {
  return z
    .string({
      error: (issue) =>
        issue.input === undefined ? missing : `${name} must be given once, as a date in the format MM-DD-YYYY`,
    })
    .regex(DATE_SHAPE, { error: `${name} must be a date in the format MM-DD-YYYY`, abort: true })
    .refine((value) => swissDay(value) !== undefined, { error: `${name} is not a real calendar date`, abort: true })
    .meta({ description: 'MM-DD-YYYY, a whole day in Europe/Zurich', example: '03-30-2025' });
}

export const environmentParam = z
  .enum(environmentValues, { error: 'environment must be TEST or PRODUCTION' })
  .default('TEST')
  .meta({ description: 'TEST (default) or PRODUCTION' });

/** `dateFrom` ≤ `dateTo`, reported on `dateTo`. */
export const dateOrder = (value: { dateFrom?: string; dateTo?: string }) =>
  !value.dateFrom || !value.dateTo || swissDay(value.dateFrom)! <= swissDay(value.dateTo)!;
export const DATE_ORDER_ERROR = { error: 'dateFrom must not be after dateTo', path: ['dateTo'] };
