import { z } from 'zod';

/** The largest value of Postgres' `integer`, the type of most ids. */
export const INTEGER_ID_MAX = 2_147_483_647;

/**
 * The one rule for an integer in a path or query (ids, `page`, `page_size`): a positive integer written plainly (no
 * sign, no leading zero, no exponent) up to `max`, so that a huge number is a 400 rather than a database error and
 * `01` is not a second spelling of `1`.
 */
export function positiveIntegerParam(name: string, max: number) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be given once`) })
    .regex(/^[1-9][0-9]{0,15}$/, { error: `${name} must be a positive integer`, abort: true })
    .transform(Number)
    .refine((value) => value <= max, { error: `${name} must be between 1 and ${max}` });
}

/** An id in a path or query, within the column's range. */
export function idParam(name: string, { max = INTEGER_ID_MAX, example }: { max?: number; example?: string } = {}) {
  return positiveIntegerParam(name, max).meta({ description: 'A positive integer', ...(example ? { example } : {}) });
}
