/** A donor as a platform call (`POST /platform/checkouts`) sends it: the fields the form asks for, no optional ones. */
export const PLATFORM_DONOR = {
  gender: 'female',
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
