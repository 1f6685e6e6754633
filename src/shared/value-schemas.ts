import { z } from 'zod';
import { type DonorField, GENDERS } from './donor-fields';
import type { TimestampStyle } from './time';

/*
 * Schemas of the values that the read API and the webhook payloads share (timestamps, amounts, the donor, the
 * payment, the campaign). Objects are strict (additionalProperties: false), so a field that leaks into an older
 * version fails validation.
 */

const TIMESTAMP_PATTERNS: Record<TimestampStyle, { pattern: RegExp; description: string; example: string }> = {
  'swiss-local': {
    pattern: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}[+-]\d{2}:\d{2}$/,
    description: 'Swiss local time (Europe/Zurich) with its offset',
    example: '2025-07-15T12:30:00+02:00',
  },
  utc: {
    pattern: /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/,
    description: 'UTC with Z',
    example: '2025-07-15T10:30:00Z',
  },
};

export const timestamp = (style: TimestampStyle) => {
  const { pattern, description, example } = TIMESTAMP_PATTERNS[style];
  return z.string().regex(pattern).meta({ format: 'date-time', description, example });
};

export const amount = z.number().meta({ description: 'Amount in the currency, at most 2 decimals', example: 50 });
export const currency = z.string().length(3).meta({ description: 'ISO 4217', example: 'CHF' });
export const gender = z.enum(GENDERS);
export const customFields = z
  .record(z.string(), z.union([z.string(), z.boolean()]))
  .meta({ description: 'Answers to the custom fields of the donation form: text, or true/false for checkboxes' });

export const campaign = z.strictObject({ id: z.number().int(), title: z.string() }).meta({ id: 'Campaign' });

/** The donor fields, shared by the donor object of donation entries, contacts and webhook donations. */
export const donorShape = {
  gender,
  first_name: z.string(),
  last_name: z.string(),
  email: z.string(),
  company: z.string().nullable(),
  po_box: z.string().nullable(),
  street: z.string(),
  street_number: z.string(),
  postal_code: z.string(),
  city: z.string(),
  country: z.string().length(2).meta({ description: 'ISO 3166-1 alpha-2' }),
  language: z.string().length(2).meta({ description: 'ISO 639-1' }),
  newsletter: z.boolean(),
} satisfies Record<DonorField, z.ZodType>;

export const paymentShape = {
  transaction_id: z.string(),
  method: z.string().meta({ description: 'Payment method code (VIS, ECA, TWI, PAP, PFC, PEF, INV, …)' }),
  status: z.enum(['completed', 'pending']),
};

export const payment = z.strictObject(paymentShape).meta({ id: 'Payment' });

/*
 * `schema.nullable()` of a named schema would make the component itself nullable in the generated document;
 * an explicit union with null keeps the reference exact.
 */
export const orNull = <T extends z.ZodType>(schema: T) => z.union([schema, z.null()]);

/**
 * Text as Postgres stores it unchanged: a NUL character would make the insert fail instead of being a 400, and an
 * unpaired UTF-16 surrogate (`"\ud800"` in JSON) would be stored as U+FFFD, so that two different values (two
 * transaction ids) became one and a repeat found a record it is not.
 */
export const storableText = (max: number) =>
  z
    .string()
    .max(max)
    // oxlint-disable-next-line no-control-regex -- NUL is the character Postgres text cannot hold
    .regex(/^[^\u0000]*$/, 'must not contain NUL characters')
    .regex(/^\P{Cs}*$/u, 'must be valid Unicode (an unpaired surrogate such as \\ud800 is not)');
