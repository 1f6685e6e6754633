import { isEndpointFailing } from '../../src/delivery-rules/endpoint-failing';

// The rule of the failing endpoint: every attempt failed since a streak start at least N minutes old.

const now = new Date('2025-07-15T10:30:00Z');
const minutesBefore = (minutes: number) => new Date(now.getTime() - minutes * 60_000);

test('no streak (the last attempt delivered, or there was none) is never failing', () => {
  expect(isEndpointFailing(null, now, 30)).toBe(false);
  expect(isEndpointFailing(null, now, 1)).toBe(false);
});

test('a streak younger than N minutes is not failing yet; from N minutes on it is', () => {
  expect(isEndpointFailing(minutesBefore(29), now, 30)).toBe(false);
  expect(isEndpointFailing(new Date(minutesBefore(30).getTime() + 1), now, 30)).toBe(false);
  expect(isEndpointFailing(minutesBefore(30), now, 30)).toBe(true);
  expect(isEndpointFailing(minutesBefore(60 * 24 * 3), now, 30)).toBe(true);
});

test('a streak starting after now (an attempt recorded by a clock ahead of this one) is not failing', () => {
  expect(isEndpointFailing(new Date(now.getTime() + 60_000), now, 1)).toBe(false);
});
