import { DateTime } from 'luxon';
import { z } from 'zod';
import { SWISS_ZONE } from '../shared/time';
import { environmentValues } from './versions/schemas';
import { ApiError } from './errors';

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
    .regex(DATE_SHAPE, { error: `${name} must be a date in the format MM-DD-YYYY` })
    .refine((value) => swissDay(value) !== undefined, { error: `${name} is not a real calendar date`, abort: true })
    .meta({ description: 'MM-DD-YYYY, a whole day in Europe/Zurich', example: '03-30-2025' });
}

export const environmentParam = z
  .enum(environmentValues, { error: 'environment must be TEST or PRODUCTION' })
  .default('TEST')
  .meta({ description: 'TEST (default) or PRODUCTION' });

/** A positive integer that fits Postgres' integer columns. */
export function idParam(name: string) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be given once`) })
    .regex(/^[0-9]{1,10}$/, { error: `${name} must be a positive integer` })
    .transform(Number)
    .refine((value) => value >= 1 && value <= 2_147_483_647, { error: `${name} must be between 1 and 2147483647` })
    .meta({ description: 'A positive integer', example: '7' });
}

const MAX_PAGE_SIZE = 1000;
const DEFAULT_PAGE_SIZE = 100;

function positiveIntegerParam(name: string, max: number, fallback: number) {
  return z
    .string({ error: `${name} must be given once` })
    .regex(/^[0-9]{1,10}$/, { error: `${name} must be a positive integer` })
    .transform(Number)
    .refine((value) => value >= 1 && value <= max, { error: `${name} must be between 1 and ${max}` })
    .optional()
    .transform((value) => value ?? fallback);
}

export const paginationParams = {
  page: positiveIntegerParam('page', 2_147_483_647, 1).meta({ description: 'Page number, from 1' }),
  page_size: positiveIntegerParam('page_size', MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE).meta({
    description: `Results per page, default ${DEFAULT_PAGE_SIZE}, at most ${MAX_PAGE_SIZE}`,
  }),
};

/** A request part parsed by its schema; the first problem becomes the 400 message. */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const [issue] = result.error.issues;
  const missingDates = issue.message === BOTH_DATES_REQUIRED;
  throw new ApiError(400, missingDates ? 'missing_parameter' : 'invalid_parameter', issue.message);
}

/** `dateFrom` ≤ `dateTo`, reported on `dateTo`. */
export const dateOrder = (value: { dateFrom?: string; dateTo?: string }) =>
  !value.dateFrom || !value.dateTo || swissDay(value.dateFrom)! <= swissDay(value.dateTo)!;
export const DATE_ORDER_ERROR = { error: 'dateFrom must not be after dateTo', path: ['dateTo'] };
