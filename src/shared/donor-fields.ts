/**
 * The donor as the webhook `donor` object and the API's donation entries and contacts show it (without
 * `custom_fields`), declared once in the spec's order. Select lists, presenters and schemas derive from this list,
 * and the output field order follows it.
 */

/** The person: what a contact row and a donation form share. */
export const DONOR_PERSON_FIELDS = [
  'gender',
  'first_name',
  'last_name',
  'email',
  'company',
  'po_box',
  'street',
  'street_number',
  'postal_code',
  'city',
  'country',
  'language',
] as const;

export const DONOR_FIELDS = [...DONOR_PERSON_FIELDS, 'newsletter'] as const;

export type DonorPersonField = (typeof DONOR_PERSON_FIELDS)[number];
export type DonorField = (typeof DONOR_FIELDS)[number];

/** The spec marks these optional: they may be null. */
type OptionalDonorField = 'company' | 'po_box';

export const GENDERS = ['male', 'female', 'prefer-not-to-say'] as const;
export type Gender = (typeof GENDERS)[number];

export type DonorPerson = {
  [F in DonorPersonField]: F extends 'gender' ? Gender : F extends OptionalDonorField ? string | null : string;
};
export type Donor = DonorPerson & { newsletter: boolean };

/** The donor fields of a row or object, in declared order and nothing else: nothing leaks by accident. */
export function pickDonor(source: Donor): Donor {
  return Object.fromEntries(DONOR_FIELDS.map((field) => [field, source[field]])) as Donor;
}
