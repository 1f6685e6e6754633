import { data as currencyData } from 'currency-codes';
import { all as allCountries } from 'iso-3166-1';
import ISO6391 from 'iso-639-1';

/*
 * The code lists the write API checks against, from packages that follow the standards (Node's ICU was no clean
 * list: it names `ZZ` "Unknown Region", takes `EU` and `UN` as regions and withdrawn language codes such as `iw`).
 */

/**
 * Codes of ISO 4217 list one that name nothing a donor pays in, and that a payment is therefore never in. The list
 * marks them itself (the package ships it as `iso-4217-list-one.xml`; a test keeps this set in step with it):
 * - no minor unit ("N.A."): precious metals (XAU, XAG, XPT, XPD), the European bond market units (XBA–XBD), the
 *   IMF's special drawing right (XDR), the Sucre (XSU), the ADB unit of account (XUA), the testing code (XTS) and
 *   "no currency" (XXX);
 * - funds (`IsFund`): units of account and settlement codes such as the WIR franc and euro (CHW, CHE), the US dollar
 *   next day (USN) and the indexed units of Bolivia, Chile, Colombia, Mexico and Uruguay (BOV, CLF, COU, MXV, UYI);
 * - UYW, Uruguay's wage-indexed unit: listed without the fund flag, yet an index unit like CLF, not money.
 * The package's own data cannot tell them apart: it gives "no minor unit" as 0 decimals, like the yen.
 */
export const NON_CURRENCIES: ReadonlySet<string> = new Set([
  ...['XAU', 'XAG', 'XPT', 'XPD', 'XBA', 'XBB', 'XBC', 'XBD', 'XDR', 'XSU', 'XUA', 'XTS', 'XXX'],
  ...['BOV', 'CHE', 'CHW', 'CLF', 'COU', 'MXV', 'USN', 'UYI'],
  'UYW',
]);

/**
 * Currencies ISO 4217 added after the list the package ships (published 2024-06-25), with their minor units: the
 * Caribbean guilder of Curaçao and Sint Maarten, in circulation since 31 March 2025 (it replaces ANG, which stays for
 * records of before). A test fails once the package lists one of them, so that it is then taken from there.
 */
export const CURRENCIES_SINCE_THE_PACKAGED_LIST: ReadonlyMap<string, number> = new Map([['XCG', 2]]);

/** ISO 4217 list one, as published (currency-codes states the date), without the non-currencies: code → minor units. */
const CURRENCY_MINOR_UNITS: ReadonlyMap<string, number> = new Map([
  ...currencyData.filter(({ code }) => !NON_CURRENCIES.has(code)).map(({ code, digits }) => [code, digits] as const),
  ...CURRENCIES_SINCE_THE_PACKAGED_LIST,
]);

/**
 * ISO 3166-1 alpha-2, plus `XK`: Kosovo's user-assigned code, which the EU, banks and payment providers use, and
 * which a donor living there must be able to give.
 */
const COUNTRIES = new Set([...allCountries().map((country) => country.alpha2), 'XK']);

/** ISO 639-1, current codes only (`he`, not the withdrawn `iw`). */
const LANGUAGES = new Set<string>(ISO6391.getAllCodes());

export const isCurrencyCode = (value: string) => CURRENCY_MINOR_UNITS.has(value);
export const isCountryCode = (value: string) => COUNTRIES.has(value);
export const isLanguageCode = (value: string) => LANGUAGES.has(value);

/** Each list's codes in order, for the OpenAPI document: what it admits, the server takes. */
export const CURRENCY_CODES: readonly string[] = [...CURRENCY_MINOR_UNITS.keys()].sort();
export const COUNTRY_CODES: readonly string[] = [...COUNTRIES].sort();
export const LANGUAGE_CODES: readonly string[] = [...LANGUAGES].sort();

/** The decimals of the currency's minor unit by ISO 4217 (JPY 0, CHF 2, KWD 3); undefined for no currency. */
export const currencyMinorUnits = (code: string): number | undefined => CURRENCY_MINOR_UNITS.get(code);
