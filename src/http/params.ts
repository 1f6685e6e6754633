import { z } from 'zod';

/** The largest value of Postgres' `integer`, the type of most ids. */
export const INTEGER_ID_MAX = 2_147_483_647;

/**
 * The one rule for an id in a path or query: a positive integer written plainly (no sign, no leading zero, no
 * exponent) within the column's range, so that a huge number is a 400 rather than a database error.
 */
export function idParam(name: string, { max = INTEGER_ID_MAX, example }: { max?: number; example?: string } = {}) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be given once`) })
    .regex(/^[1-9][0-9]{0,15}$/, { error: `${name} must be a positive integer`, abort: true })
    .transform(Number)
    .refine((value) => value <= max, { error: `${name} must be between 1 and ${max}` })
    .meta({ description: 'A positive integer', ...(example ? { example } : {}) });
}
