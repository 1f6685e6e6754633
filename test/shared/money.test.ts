import { decimalsOf, isAmountIn, minorStep, splitProportionally, toAmount, toMinor } from '../../src/shared/money';

test('amounts with up to two decimals convert exactly both ways', () => {
  expect(toMinor(12.34)).toBe(1234);
  expect([toMinor(0.1), toMinor(0.29), toMinor(1.15), toMinor(-2.5), toMinor(-0), toMinor(5e1)]).toEqual([10, 29, 115, -250, 0, 5000]);
  expect(toMinor(999_999_999.99)).toBe(99_999_999_999);
  expect(toMinor(50)).toBe(5000);
  expect(toAmount(1234)).toBe(12.34);
});

test('a third decimal or a non-number is refused', () => {
  expect(toMinor(1.005)).toBeUndefined();
  // Exactly, not within a tolerance: JSON's 50.0000000001 is a different number from 50 and is not rounded to it.
  for (const amount of [50.0000000001, 49.9999999999, 0.001, 1e-7, 5e-324, 0.1 + 0.2, 1e21, 2 ** 53]) {
    expect([amount, toMinor(amount)]).toEqual([amount, undefined]);
  }
  expect(toMinor(Number.NaN)).toBeUndefined();
  expect(toMinor(Number.POSITIVE_INFINITY)).toBeUndefined();
});

test('each currency takes amounts in its own smallest unit, at most two decimals', () => {
  expect(['JPY', 'CHF', 'EUR', 'KWD', 'BHD'].map(decimalsOf)).toEqual([0, 2, 2, 2, 2]);
  expect(['JPY', 'CHF', 'KWD'].map(minorStep)).toEqual([100, 1, 1]);
  expect([isAmountIn(15500, 'JPY'), isAmountIn(155, 'JPY'), isAmountIn(155, 'CHF'), isAmountIn(0, 'JPY')]).toEqual([true, false, true, true]);
  // A code stored before it was refused (XAU) counts with two decimals: stored records stay readable.
  expect(minorStep('XAU')).toBe(1);
});

/** A small seeded generator (mulberry32), so that a failing case can be replayed. */
function randomSource(seed: number): (below: number) => number {
  let state = seed >>> 0;
  return (below) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
  };
}

/**
 * What is wrong with a split, if anything: every part must be non-negative, the parts must sum to the total, and each
 * must be within one minor unit of its exact share.
 */
function unfairness(totalMinor: number, weights: number[]): string | undefined {
  const parts = splitProportionally(totalMinor, weights);
  const weightSum = weights.reduce((sum, weight) => sum + BigInt(weight), 0n);
  // |part - total * weight / W| <= 1, compared exactly as |part * W - total * weight| <= W.
  const farOff = (part: number, index: number) => {
    const difference = BigInt(part) * weightSum - BigInt(totalMinor) * BigInt(weights[index]);
    return (difference < 0n ? -difference : difference) > weightSum;
  };
  const problem =
    parts.length !== weights.length ? 'wrong length'
    : parts.some((part) => part < 0) ? 'a negative part'
    : parts.reduce((sum, part) => sum + part, 0) !== totalMinor ? 'parts do not sum to the total'
    : parts.some(farOff) ? 'a part more than one minor unit off its exact share'
    : undefined;
  return problem && `${problem}: ${totalMinor} by [${weights.join(', ')}] gave [${parts.join(', ')}]`;
}

describe('splitProportionally', () => {
  test('a small fee over many equal positions gives no position a negative share', () => {
    // Rounding each share on its own gave [1, 1, 1, 1, 1, -2] here.
    expect(splitProportionally(3, [1, 1, 1, 1, 1, 1])).toEqual([1, 0, 1, 0, 1, 0]);
    expect(unfairness(3, [5000, 5000, 5000, 5000, 5000, 5000])).toBeUndefined();
    expect(unfairness(1, [100, 100, 100, 100])).toBeUndefined();
    expect(unfairness(49, Array.from({ length: 50 }, () => 2000))).toBeUndefined();
  });

  test('the running total is rounded: known splits', () => {
    expect(splitProportionally(1000, [1, 1, 1])).toEqual([333, 334, 333]);
    expect(splitProportionally(295, [5000, 2500])).toEqual([197, 98]);
    expect(splitProportionally(7312, [5000, 2550])).toEqual([4842, 2470]);
    expect(splitProportionally(0, [1, 2, 3])).toEqual([0, 0, 0]);
    expect(splitProportionally(100, [])).toEqual([]);
    expect(splitProportionally(100, [0, 0])).toEqual([0, 100]);
  });

  test('property: random weights and small totals always split fairly', () => {
    const random = randomSource(20250715);
    const problems = [];
    for (let run = 0; run < 5000; run += 1) {
      const positions = 1 + random(50);
      const scale = [10, 1000, 100_000][random(3)];
      const weights = Array.from({ length: positions }, () => 1 + random(scale));
      problems.push(unfairness(random(3 * positions + 5), weights));
    }
    expect(problems.filter(Boolean).slice(0, 3)).toEqual([]);
  });

  test('property: large totals and weights stay exact (beyond 2^53 in the products)', () => {
    const random = randomSource(7);
    const problems = [unfairness(99_999_999_999, [99_999_999_999, 1, 99_999_999_998])];
    for (let run = 0; run < 500; run += 1) {
      const weights = Array.from({ length: 1 + random(50) }, () => 1 + random(99_999_999_999));
      problems.push(unfairness(random(99_999_999_999), weights));
    }
    expect(problems.filter(Boolean).slice(0, 3)).toEqual([]);
  });

  test('in whole steps of a currency: 1000 yen over three positions is 333, 334, 333 yen', () => {
    expect(splitProportionally(100_000, [1, 1, 1], 100)).toEqual([33_300, 33_400, 33_300]);
    expect(splitProportionally(300, [1, 1, 1, 1, 1, 1], 100)).toEqual([100, 0, 100, 0, 100, 0]);
    const random = randomSource(4217);
    for (let run = 0; run < 500; run += 1) {
      const weights = Array.from({ length: 1 + random(50) }, () => 1 + random(1_000_000));
      const total = 100 * random(1_000_000);
      const parts = splitProportionally(total, weights, 100);
      expect(parts.filter((part) => part % 100 !== 0 || part < 0)).toEqual([]);
      expect(parts.reduce((sum, part) => sum + part, 0)).toBe(total);
    }
    expect(() => splitProportionally(155, [1, 1], 100)).toThrow(RangeError);
    expect(() => splitProportionally(100, [1, 1], 0)).toThrow(RangeError);
  });

  test('negative totals or weights are a programming error', () => {
    expect(() => splitProportionally(-1, [1])).toThrow(RangeError);
    expect(() => splitProportionally(1, [1, -1])).toThrow(RangeError);
  });
});
