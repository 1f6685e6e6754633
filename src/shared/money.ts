import { currencyMinorUnits } from './iso-codes';

/**
 * Money is integer minor units everywhere inside; only the JSON edge uses decimal numbers with at most two decimals.
 * A minor unit here is a hundredth of the currency's unit, whatever the currency: the finest step an amount of the
 * API or of a webhook shows. A currency whose own minor unit is coarser takes only whole steps of it (a yen is 100
 * minor units, so JPY amounts have no decimals); one whose minor unit is finer (the dinars of Kuwait, Bahrain, …:
 * three decimals) takes amounts with at most two, whole tens of fils: an amount the payloads could not show is
 * refused, never rounded.
 */
export function toAmount(minor: number): number {
  return minor / 100;
}

/** The shortest decimal spelling of a number with at most two decimals (JavaScript spells 1e21 and 1e-7 so). */
const TWO_DECIMALS = /^(-?)(\d+)(?:\.(\d{1,2}))?$/;

/**
 * Minor units of a JSON amount, or undefined when it is not a finite number with at most two decimals. Decided on
 * the shortest decimal that reads back as the same number, which is what the JSON said (up to digits a double
 * cannot hold), and computed from its digits: no tolerance, so 50.0000000001 is refused rather than rounded.
 */
export function toMinor(amount: number): number | undefined {
  const match = TWO_DECIMALS.exec(String(amount));
  if (!match) return undefined;
  const [, sign, units, decimals = ''] = match;
  const minor = Number(units) * 100 + Number(decimals.padEnd(2, '0'));
  if (!Number.isSafeInteger(minor)) return undefined;
  return sign ? -minor : minor;
}

/**
 * The decimals an amount in the currency may have: its minor unit by ISO 4217, at most the two every amount carries.
 * A code that is no currency any more (stored before it was refused) counts with two.
 */
export function decimalsOf(currency: string): number {
  return Math.min(2, currencyMinorUnits(currency) ?? 2);
}

/** Minor units in the smallest amount of the currency: 100 for JPY, 1 for CHF and for KWD (see above). */
export function minorStep(currency: string): number {
  return 10 ** (2 - decimalsOf(currency));
}

/** Whether the minor units are an amount the currency has (a whole number of yen for JPY). */
export function isAmountIn(minor: number, currency: string): boolean {
  return minor % minorStep(currency) === 0;
}

/** `numerator / denominator` rounded half up, exactly, for non-negative integers of any size. */
function roundedQuotient(numerator: bigint, denominator: bigint): bigint {
  return (2n * numerator + denominator) / (2n * denominator);
}

/**
 * Splits a non-negative total over parts in proportion to their non-negative weights, in minor units, so that the parts add up
 * to the total exactly and none is negative. Rounds the running total rather than each part: part i is
 * round(total * (w1 + … + wi) / W) minus the same for the parts before it. Each part is then within one minor unit of
 * its exact share, the cumulative sums never go down (so no part is negative, as "round each, remainder on the
 * last" can be when many parts round up), and the last part is what the others leave of the total.
 * Computed in bigint, because total * weight exceeds 2^53 for large amounts. Weights that are all zero put the
 * whole total on the last part. With a `step` (`minorStep` of the currency), the total is split in whole steps, so
 * that every part is an amount of the currency: 1000 yen over three positions is 333, 334 and 333 yen, never 333.33.
 */
export function splitProportionally(totalMinor: number, weights: readonly number[], step = 1): number[] {
  if (totalMinor < 0 || weights.some((weight) => weight < 0)) {
    throw new RangeError('splitProportionally splits a non-negative total by non-negative weights');
  }
  if (!Number.isSafeInteger(step) || step < 1 || totalMinor % step !== 0) {
    throw new RangeError(`splitProportionally splits a total of whole steps: ${totalMinor} is not a multiple of ${step}`);
  }
  if (step > 1) return splitProportionally(totalMinor / step, weights).map((part) => part * step);
  if (weights.length === 0) return [];
  // BigInt() also refuses fractions: minor units are integers.
  const weightSum = weights.reduce((sum, weight) => sum + BigInt(weight), 0n);
  if (weightSum === 0n) return weights.map((_, index) => (index === weights.length - 1 ? totalMinor : 0));
  const total = BigInt(totalMinor);
  let cumulativeWeight = 0n;
  let previousCumulative = 0n;
  return weights.map((weight) => {
    cumulativeWeight += BigInt(weight);
    const cumulative = roundedQuotient(total * cumulativeWeight, weightSum);
    const part = Number(cumulative - previousCumulative);
    previousCumulative = cumulative;
    return part;
  });
}
