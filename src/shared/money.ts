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

/**
 * Splits a total over parts in proportion to their weights, rounded to minor units, with the remainder on the last
 * part, so that the parts always add up to the total exactly.
 */
export function splitProportionally(totalMinor: number, weights: readonly number[]): number[] {
  const weightSum = weights.reduce((sum, weight) => sum + weight, 0);
  if (weights.length === 0) return [];
  if (weightSum === 0) return weights.map((_, index) => (index === weights.length - 1 ? totalMinor : 0));
  const parts = weights.slice(0, -1).map((weight) => Math.round((totalMinor * weight) / weightSum));
  parts.push(totalMinor - parts.reduce((sum, part) => sum + part, 0));
  return parts;
}
