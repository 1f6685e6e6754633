import { codes as currencyCodes } from 'currency-codes';
import { all as allCountries } from 'iso-3166-1';
import ISO6391 from 'iso-639-1';

/*
 * The code lists the write API checks against, from packages that follow the standards (Node's ICU was no clean
 * list: it names `ZZ` "Unknown Region", takes `EU` and `UN` as regions and withdrawn language codes such as `iw`).
 */

/** ISO 4217 list one, as published (currency-codes states the date); funds and metals included. */
const CURRENCIES = new Set(currencyCodes());

/**
 * ISO 3166-1 alpha-2, plus `XK`: Kosovo's user-assigned code, which the EU, banks and payment providers use, and
 * which a donor living there must be able to give.
 */
const COUNTRIES = new Set([...allCountries().map((country) => country.alpha2), 'XK']);

/** ISO 639-1, current codes only (`he`, not the withdrawn `iw`). */
const LANGUAGES = new Set<string>(ISO6391.getAllCodes());

export const isCurrencyCode = (value: string) => CURRENCIES.has(value);
export const isCountryCode = (value: string) => COUNTRIES.has(value);
export const isLanguageCode = (value: string) => LANGUAGES.has(value);
