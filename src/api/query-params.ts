import { DateTime } from 'luxon';
import { z } from 'zod';
import { monthDayYearPattern } from '../shared/calendar-patterns';
import { SWISS_ZONE } from '../shared/time';
import { environmentValues } from './versions/schemas';

/*
 * Query parameter schemas, shared by request validation and the OpenAPI document. Every message names its
 * parameter, because the first one is what the client reads in the 400 body.
 */

const DATE_FORMAT = 'MM-dd-yyyy';
const DATE_SHAPE = /^\d{2}-\d{2}-\d{4}$/;
// Years before 1000 would not be four digits back out; nothing in this business happened then anyway.
const EARLIEST_YEAR = 1000;
export const BOTH_DATES_REQUIRED = 'Both dateFrom and dateTo are required, in the format MM-DD-YYYY';

/** The start of a MM-DD-YYYY day in Europe/Zurich, or undefined when it is not a real calendar date. */
export function swissDay(value: string): DateTime | undefined {
  if (!DATE_SHAPE.test(value)) return undefined;
  const day = DateTime.fromFormat(value, DATE_FORMAT, { zone: SWISS_ZONE });
  return day.isValid && day.year >= EARLIEST_YEAR ? day : undefined;
}

/** Whole Swiss days, both ends inclusive, as a half-open instant range [start, end). */
export function swissDayRange(from: string, to: string): { start: Date; end: Date } {
  return {
    start: swissDay(from)!.toJSDate(),
    end: swissDay(to)!.plus({ days: 1 }).startOf('day').toJSDate(),
  };
}

/**
 * A MM-DD-YYYY day. Its document pattern admits exactly the days the server takes, so that no generated client or
 * fuzzer sends a day that is then refused; `meaning` opens the parameter's description.
 */
export function dateParam(name: string, { missing = `${name} is required`, meaning }: { missing?: string; meaning?: string } = {}) {
  return z
    .string({
      error: (issue) =>
        issue.input === undefined ? missing : `${name} must be given once, as a date in the format MM-DD-YYYY`,
    })
    .regex(DATE_SHAPE, { error: `${name} must be a date in the format MM-DD-YYYY`, abort: true })
    .refine((value) => swissDay(value) !== undefined, { error: `${name} is not a real calendar date`, abort: true })
    .meta({
      description:
        `${meaning ? `${meaning}: ` : ''}MM-DD-YYYY, a whole day in Europe/Zurich; a real calendar day from ` +
        `01-01-${EARLIEST_YEAR} to 12-31-9999 (the pattern admits exactly those: February 29 only in leap years)`,
      example: '03-30-2025',
      pattern: monthDayYearPattern(EARLIEST_YEAR),
    });
}

export const environmentParam = z
  .enum(environmentValues, { error: 'environment must be TEST or PRODUCTION' })
  .default('TEST')
  .meta({ description: 'TEST (default) or PRODUCTION' });

/** `dateFrom` ≤ `dateTo`, reported on `dateTo`. */
export const dateOrder = (value: { dateFrom?: string; dateTo?: string }) =>
  !value.dateFrom || !value.dateTo || swissDay(value.dateFrom)! <= swissDay(value.dateTo)!;
export const DATE_ORDER_ERROR = { error: 'dateFrom must not be after dateTo', path: ['dateTo'] };
