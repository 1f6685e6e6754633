/*
 * Regular expressions that admit exactly the real calendar days of a range of years, for the OpenAPI document: a
 * client or a fuzzer that reads a date parameter's pattern sends only days the server takes (the server checks the
 * calendar with luxon; test/api/parameter-bounds.test.ts holds the two together). Plain alternations, without
 * lookaheads, which not every reader of a pattern supports.
 */

/** Days 01–28 of every month, the 29th and 30th of every month but February, the 31st of the long months. */
const MONTH_DAY = '(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31';

/** The four-digit years from `from` (a whole thousand) to 9999, and the leap years among them. */
function yearsFrom(from: number) {
  const first = `[${from / 1000}-9]`;
  const leapCenturies: string[] = [];
  for (let century = from / 100; century <= 99; century++) if (century % 4 === 0) leapCenturies.push(String(century));
  return {
    any: `${first}[0-9]{3}`,
    // Divisible by 4 but not by 100 (the last two digits a multiple of 4 other than 00), or by 400.
    leap: `(?:${first}[0-9](?:0[48]|[2468][048]|[13579][26])|(?:${leapCenturies.join('|')})00)`,
  };
}

/** `MM-DD-YYYY`, a real day of the years from `fromYear` (a whole thousand) to 9999. */
export function monthDayYearPattern(fromYear: number): string {
  const { any, leap } = yearsFrom(fromYear);
  return `^(?:(?:${MONTH_DAY})-${any}|02-29-${leap})$`;
}

/** `YYYY-MM-DD`, a real day of the years from `fromYear` (a whole thousand) to 9999, to be part of a pattern. */
export function yearMonthDayPattern(fromYear: number): string {
  const { any, leap } = yearsFrom(fromYear);
  return `(?:${any}-(?:${MONTH_DAY})|${leap}-02-29)`;
}
