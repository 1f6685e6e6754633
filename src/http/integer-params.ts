import { z } from 'zod';

/** The largest value of Postgres' `integer`, the type of most ids. */
export const INTEGER_ID_MAX = 2_147_483_647;

const digitsFrom = (lowest: number, highest: number) => (lowest === highest ? String(lowest) : `[${lowest}-${highest}]`);

/**
 * A pattern that admits exactly the decimal spellings of 1 to `max` without sign or leading zero: every shorter
 * number, then for each digit of `max` the numbers that agree with it up to there and are smaller at that digit, then
 * `max` itself (for 1000: `[1-9][0-9]{0,2}|1000`).
 */
export function positiveIntegerPattern(max: number): string {
  const digits = String(max);
  const alternatives = digits.length > 1 ? [`[1-9][0-9]{0,${digits.length - 2}}`] : [];
  for (let index = 0; index < digits.length; index++) {
    const lowest = index === 0 ? 1 : 0;
    const below = Number(digits[index]) - 1;
    if (below < lowest) continue;
    const rest = digits.length - index - 1;
    alternatives.push(digits.slice(0, index) + digitsFrom(lowest, below) + (rest > 1 ? `[0-9]{${rest}}` : rest === 1 ? '[0-9]' : ''));
  }
  alternatives.push(digits);
  return `^(?:${alternatives.join('|')})$`;
}

/**
 * The one rule for an integer in a path or query (ids, `page`, `page_size`): a positive integer written plainly (no
 * sign, no leading zero, no exponent) up to `max`, so that a huge number is a 400 rather than a database error and
 * `01` is not a second spelling of `1`. The document declares it an integer with its bounds, and a pattern of exactly
 * the spellings taken.
 */
export function positiveIntegerParam(name: string, max: number) {
  return z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be given once`) })
    .regex(/^[1-9][0-9]{0,15}$/, { error: `${name} must be a positive integer`, abort: true })
    .transform(Number)
    .refine((value) => value <= max, { error: `${name} must be between 1 and ${max}` })
    .meta({
      type: 'integer',
      format: max <= INTEGER_ID_MAX ? 'int32' : 'int64',
      minimum: 1,
      maximum: max,
      pattern: positiveIntegerPattern(max),
    });
}

/** An id in a path or query, within the column's range. */
export function idParam(name: string, { max = INTEGER_ID_MAX, example }: { max?: number; example?: number } = {}) {
  return positiveIntegerParam(name, max).meta({
    description: `A positive integer, 1 to ${max}, in decimal digits without sign or leading zero`,
    ...(example ? { example } : {}),
  });
}
