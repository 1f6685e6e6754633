/**
 * Swiss wall-clock texts for what workflows show in Temporal UI (`11:20`, `16.07.`, `15.07.2025, 08:00`), worked out
 * from the summer-time rule instead of Intl. Temporal's workflow sandbox evaluates the bundle's modules afresh for
 * every workflow it creates, so an Intl.DateTimeFormat made at module level was made three times per delivery: the
 * biggest part of a delivery workflow's start on the benchmark (BENCHMARKS.md, issue 29). Making one on first use
 * would still make it once per workflow.
 *
 * Since 1996 Switzerland keeps the EU's rule: UTC+2 from the last Sunday of March to the last Sunday of October, both
 * changes at 01:00 UTC, UTC+1 otherwise. Earlier instants (other rules) are left to Intl, which the workflows never
 * reach: they format the times of their own attempts.
 */

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const FIRST_YEAR_OF_THE_RULE = 1996;

/** 01:00 UTC on the last Sunday of `month` (0-based) of `year`. */
function lastSundayAtOneUtc(year: number, month: number): number {
  const lastDay = Date.UTC(year, month + 1, 0, 1); // day 0 of the next month: the last day of this one
  return lastDay - new Date(lastDay).getUTCDay() * DAY_MS;
}

/** Zurich's offset from UTC in hours at `ms`, for instants under the current rule; undefined before it. */
export function swissOffsetHours(ms: number): 1 | 2 | undefined {
  const year = new Date(ms).getUTCFullYear();
  if (!(year >= FIRST_YEAR_OF_THE_RULE)) return undefined;
  return ms >= lastSundayAtOneUtc(year, 2) && ms < lastSundayAtOneUtc(year, 9) ? 2 : 1;
}

export interface SwissClock {
  /** `16.07.` */
  day: string;
  /** `2025` */
  year: string;
  /** `08:00` */
  time: string;
}

const two = (value: number) => String(value).padStart(2, '0');

let intlFallback: Intl.DateTimeFormat | undefined;

/** The fields, as de-CH writes them, from Intl: for instants before the current rule. */
function fromIntl(ms: number): SwissClock {
  intlFallback ??= new Intl.DateTimeFormat('de-CH', { timeZone: 'Europe/Zurich', day: '2-digit', month: '2-digit', year: 'numeric', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const part = Object.fromEntries(intlFallback.formatToParts(ms).map(({ type, value }) => [type, value]));
  return { day: `${part.day}.${part.month}.`, year: part.year, time: `${part.hour}:${part.minute}` };
}

/** The Swiss local day, year and time of minute precision at `ms`. */
export function swissClock(ms: number): SwissClock {
  const offset = swissOffsetHours(ms);
  if (offset === undefined) return fromIntl(ms);
  const local = new Date(ms + offset * HOUR_MS);
  return {
    day: `${two(local.getUTCDate())}.${two(local.getUTCMonth() + 1)}.`,
    year: String(local.getUTCFullYear()),
    time: `${two(local.getUTCHours())}:${two(local.getUTCMinutes())}`,
  };
}
