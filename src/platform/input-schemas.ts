import { z } from 'zod';
import { toMinor } from '../shared/money';

/** Building blocks of the write side's request bodies, shared by the platform commands. */

export const environmentInput = z.enum(['TEST', 'PRODUCTION']);

export const currencyInput = z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as CHF');
export const countryInput = z.string().regex(/^[A-Z]{2}$/, 'must be an ISO 3166-1 alpha-2 code such as CH');
export const languageInput = z.string().regex(/^[a-z]{2}$/, 'must be an ISO 639-1 code such as de');
export const genderInput = z.enum(['male', 'female', 'prefer-not-to-say']);
export const emailInput = z.email().max(254);

/** Codes such as VIS, TWI or INV; other providers' codes (PAYPAL) occur too. */
export const paymentMethodInput = z.string().regex(/^[A-Z][A-Z0-9_]{1,31}$/, 'must be a payment method code such as VIS');
export const transactionIdInput = z.string().trim().min(1).max(200);

const text = (max: number) => z.string().trim().max(max);
export const requiredText = (max: number) => text(max).min(1);
export const optionalText = (max: number) => text(max).nullable().default(null);

/** An amount in the currency's units: a number with at most two decimals. */
export const amountInput = z.number().refine((value) => toMinor(value) !== undefined, 'must be a number with at most 2 decimals');
export const positiveAmountInput = amountInput.refine((value) => value > 0, 'must be greater than 0');
export const nonNegativeAmountInput = amountInput.refine((value) => value >= 0, 'must not be negative');

/** Minor units of an amount that passed one of the amount schemas above. */
export function minorOf(amount: number): number {
  const minor = toMinor(amount);
  if (minor === undefined) throw new Error(`amount ${amount} was not validated`);
  return minor;
}

/** Answers to the donation form's custom fields: text, or true/false for checkboxes. */
export const customFieldsInput = z
  .record(z.string().trim().min(1).max(100), z.union([z.string().max(1000), z.boolean()]))
  .refine((fields) => Object.keys(fields).length <= 50, 'at most 50 custom fields')
  .default({});

export const donorInput = z.object({
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
  custom_fields: customFieldsInput,
});

export type DonorInput = z.output<typeof donorInput>;

export const paymentStatusInput = z.enum(['completed', 'pending']);
