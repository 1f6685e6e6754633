import { z } from 'zod';
import type { DonorField } from '../shared/donor-fields';
import { ApiError } from '../shared/errors';
import { COUNTRY_CODES, CURRENCY_CODES, isCountryCode, isCurrencyCode, isLanguageCode, LANGUAGE_CODES } from '../shared/iso-codes';
import { decimalsOf, isAmountIn, toMinor } from '../shared/money';
import { storableText } from '../shared/value-schemas';

/** Building blocks of the write side's request bodies, shared by the platform commands. */

export const environmentInput = z.enum(['TEST', 'PRODUCTION']);

/**
 * A code of a standard's list: spelled as the standard does, then looked up. The document lists the codes, so that a
 * client or a fuzzer that keeps to it never sends a code of the right shape that names nothing.
 */
function isoCode(shape: RegExp, isListed: (value: string) => boolean, codes: readonly string[], message: string) {
  return z.string().regex(shape, { error: message, abort: true }).refine(isListed, message).meta({ enum: [...codes] });
}

export const currencyInput = isoCode(/^[A-Z]{3}$/, isCurrencyCode, CURRENCY_CODES, 'must be an ISO 4217 code such as CHF');
export const countryInput = isoCode(/^[A-Z]{2}$/, isCountryCode, COUNTRY_CODES, 'must be an ISO 3166-1 alpha-2 code such as CH');
export const languageInput = isoCode(/^[a-z]{2}$/, isLanguageCode, LANGUAGE_CODES, 'must be an ISO 639-1 code such as de');
export const genderInput = z.enum(['male', 'female', 'prefer-not-to-say']);
/**
 * Trimmed first, as every text field is: blanks around an address are never part of it (a phone keyboard's
 * completion adds one), and the trimmed address is exactly what the donor typed, so it cannot pass for another.
 */
export const emailInput = z.string().trim().max(254).check(z.email()).meta({ pattern: z.regexes.email.source });

/** Codes such as VIS, TWI or INV; other providers' codes (PAYPAL) occur too. */
export const paymentMethodInput = z.string().regex(/^[A-Z][A-Z0-9_]{1,31}$/, 'must be a payment method code such as VIS');

/** A reference to a row: within Postgres `integer`, so that a huge number is a 400 rather than a database error. */
export const rowIdInput = z.number().int().positive().max(2_147_483_647);

const text = (max: number) => storableText(max).trim();
export const transactionIdInput = text(200).min(1);
export const requiredText = (max: number) => text(max).min(1);
export const optionalText = (max: number) => text(max).nullable().default(null);

const MAX_AMOUNT = 999_999_999.99;

/** An amount in the currency's units: a number with at most two decimals, below a billion. */
const amountInput = z
  .number()
  .max(MAX_AMOUNT, `must be at most ${MAX_AMOUNT}`)
  .refine((value) => toMinor(value) !== undefined, 'must be a number with at most 2 decimals');
// The document says what the refinements check: the bounds and the two decimals (a currency with fewer is the
// description's, as the schema cannot see the currency).
const AMOUNT_META = { maximum: MAX_AMOUNT, multipleOf: 0.01 };
export const positiveAmountInput = amountInput
  .refine((value) => value > 0, 'must be greater than 0')
  .meta({ ...AMOUNT_META, exclusiveMinimum: 0 });
export const nonNegativeAmountInput = amountInput.refine((value) => value >= 0, 'must not be negative').meta({ ...AMOUNT_META, minimum: 0 });

/** Why an amount is not one of the currency's: finer than its smallest amount (a yen has no decimals). */
export function amountPrecisionProblem(currency: string): string {
  const decimals = decimalsOf(currency);
  return decimals === 0 ? `must be a whole number: ${currency} has no decimals` : `must have at most ${decimals} decimals in ${currency}`;
}

/**
 * Adds a problem for each amount finer than its currency allows (ISO 4217 minor units: JPY 1.55 is refused), for a
 * body's refinement. An amount or currency that failed its own schema already has its problem and is skipped.
 */
export function refineAmountsIn(
  currency: string,
  amounts: ReadonlyArray<{ path: PropertyKey[]; amount: number | undefined }>,
  issues: z.RefinementCtx,
): void {
  if (!isCurrencyCode(currency)) return;
  for (const { path, amount } of amounts) {
    const minor = amount === undefined ? undefined : toMinor(amount);
    if (minor !== undefined && !isAmountIn(minor, currency)) {
      issues.addIssue({ code: 'custom', path, message: amountPrecisionProblem(currency) });
    }
  }
}

/** A problem with one body field that only the command can see (it depends on stored records): a 400 as the schemas give. */
export function invalidBodyField(name: string, message: string): ApiError {
  return new ApiError('invalid_body', `${name}: ${message}`, {}, [{ in: 'body', name, message }]);
}

/** Minor units of an amount that passed one of the amount schemas above. */
export function minorOf(amount: number): number {
  const minor = toMinor(amount);
  if (minor === undefined) throw new Error(`amount ${amount} was not validated`);
  return minor;
}

/** The most custom fields one donation form may ask, and so the most answers one checkout carries. */
export const MAX_CUSTOM_FIELDS = 50;

/** Answers to the donation form's custom fields: text, or true/false for checkboxes. */
const customFieldsInput = z
  .record(text(100).min(1), z.union([storableText(1000), z.boolean()]))
  .refine((fields) => Object.keys(fields).length <= MAX_CUSTOM_FIELDS, `at most ${MAX_CUSTOM_FIELDS} custom fields`)
  // What the key schema and the refinement check, which the generated schema leaves out: a name that is not blank.
  .meta({ maxProperties: MAX_CUSTOM_FIELDS, propertyNames: { maxLength: 100, pattern: '^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$' } })
  .default({});

/** One validator per donor field; `satisfies` keeps this in step with the declared donor fields. */
const donorFieldInputs = {
  gender: genderInput,
  first_name: requiredText(100),
  last_name: requiredText(100),
  email: emailInput,
  company: optionalText(200),
  po_box: optionalText(100),
  street: requiredText(200),
  street_number: text(20),
  postal_code: requiredText(20),
  city: requiredText(100),
  country: countryInput,
  language: languageInput,
  newsletter: z.boolean().default(false),
} satisfies Record<DonorField, z.ZodType>;

export const donorInput = z.object({ ...donorFieldInputs, custom_fields: customFieldsInput });

export const paymentStatusInput = z.enum(['completed', 'pending']);
