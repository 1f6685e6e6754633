import { splitProportionally, toAmount, toMinor } from '../../src/shared/money';

test('amounts with up to two decimals convert exactly both ways', () => {
  expect(toMinor(12.34)).toBe(1234);
  expect(toMinor(0.1 + 0.2)).toBe(30);
  expect(toMinor(50)).toBe(5000);
  expect(toAmount(1234)).toBe(12.34);
});

test('a third decimal or a non-number is refused', () => {
  expect(toMinor(1.005)).toBeUndefined();
  expect(toMinor(Number.NaN)).toBeUndefined();
  expect(toMinor(Number.POSITIVE_INFINITY)).toBeUndefined();
});

test('a proportional split sums to the total with the remainder on the last part', () => {
  expect(splitProportionally(1000, [1, 1, 1])).toEqual([333, 333, 334]);
  expect(splitProportionally(295, [5000, 2500])).toEqual([197, 98]);
  const parts = splitProportionally(9999, [123, 4567, 89]);
  expect(parts.reduce((a, b) => a + b, 0)).toBe(9999);
  expect(splitProportionally(100, [])).toEqual([]);
});
