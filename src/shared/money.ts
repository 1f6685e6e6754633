/**
 * Money is integer minor units (Rappen, cents) everywhere inside; only the JSON edge uses decimal numbers with at
 * most two decimals. All currencies handled here have two decimal places.
 */
export function toAmount(minor: number): number {
  return minor / 100;
}

/** Minor units of a JSON amount, or undefined when it is not a finite number with at most two decimals. */
export function toMinor(amount: number): number | undefined {
  if (!Number.isFinite(amount)) return undefined;
  const minor = Math.round(amount * 100);
  // Compare in cents with a tolerance far below one cent: 0.1 + 0.2 style binary noise is not a third decimal.
  if (Math.abs(minor - amount * 100) > 1e-6 || !Number.isSafeInteger(minor)) return undefined;
  return minor;
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
 * whole total on the last part.
 */
export function splitProportionally(totalMinor: number, weights: readonly number[]): number[] {
  if (totalMinor < 0 || weights.some((weight) => weight < 0)) {
    throw new RangeError('splitProportionally splits a non-negative total by non-negative weights');
  }
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
