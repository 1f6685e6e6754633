import type { Donor, Gender } from '../../src/shared/donor-fields';

/**
 * The donor of the tests, as a platform call (`POST /platform/checkouts`) sends her: the fields the form asks for, no
 * optional ones. Tests that need another donor spread it with the fields that differ.
 */
export const PLATFORM_DONOR = {
  gender: 'female' as Gender,
  first_name: 'Anna',
  last_name: 'Muster',
  email: 'anna.muster@example.ch',
  street: 'Bahnhofstrasse',
  street_number: '12',
  postal_code: '8001',
  city: 'Zürich',
  country: 'CH',
  language: 'de',
  newsletter: true,
};

export type PlatformDonor = typeof PLATFORM_DONOR & Partial<Pick<Donor, 'company' | 'po_box'>>;

/**
 * A donor as payloads and the read API present it: the donor fields in the spec's order (spelled out here, so that
 * tests comparing serialized payloads check the order), company and PO box null unless the donor has them.
 */
export function presentedDonor(donor: PlatformDonor = PLATFORM_DONOR): Donor {
  const { gender, first_name, last_name, email, company = null, po_box = null } = donor;
  const { street, street_number, postal_code, city, country, language, newsletter } = donor;
  return { gender, first_name, last_name, email, company, po_box, street, street_number, postal_code, city, country, language, newsletter };
}
