import { swissClock, swissOffsetHours } from '../../src/delivery-rules/swiss-clock';

// What the workflows showed before they stopped making Intl formatters (src/delivery-rules/swiss-clock.ts).
const intl = new Intl.DateTimeFormat('de-CH', {
  timeZone: 'Europe/Zurich',
  day: '2-digit',
  month: '2-digit',
  year: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});
const asIntlWrites = (ms: number) => {
  const { day, year, time } = swissClock(ms);
  return `${day}${year}, ${time}`;
};

test('matches Intl on every hour around each change of the clock, 1996 to 2060', () => {
  for (let year = 1996; year <= 2060; year++) {
    for (const month of [2, 9]) {
      // The whole last week of March and of October, hour by hour and at 59 minutes past.
      const from = Date.UTC(year, month, 24);
      for (let ms = from; ms < from + 9 * 86_400_000; ms += 3_600_000) {
        for (const at of [ms, ms + 59 * 60_000, ms - 1]) expect([at, asIntlWrites(at)]).toEqual([at, intl.format(at)]);
      }
    }
  }
});

test('matches Intl at random instants, and before the current rule (Intl itself)', () => {
  let seed = 29;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  for (let i = 0; i < 5_000; i++) {
    const at = Math.floor(Date.UTC(1970, 0, 1) + next() * (Date.UTC(2080, 0, 1) - Date.UTC(1970, 0, 1)));
    expect([at, asIntlWrites(at)]).toEqual([at, intl.format(at)]);
  }
});

test('summer time from the last Sunday of March to the last Sunday of October, at 01:00 UTC', () => {
  expect(swissOffsetHours(Date.UTC(2025, 2, 30, 0, 59, 59, 999))).toBe(1);
  expect(swissOffsetHours(Date.UTC(2025, 2, 30, 1))).toBe(2);
  expect(swissOffsetHours(Date.UTC(2025, 9, 26, 0, 59, 59, 999))).toBe(2);
  expect(swissOffsetHours(Date.UTC(2025, 9, 26, 1))).toBe(1);
  expect(swissOffsetHours(Date.UTC(1995, 5, 1))).toBeUndefined();
  expect(swissClock(Date.UTC(2025, 6, 15, 22, 5))).toEqual({ day: '16.07.', year: '2025', time: '00:05' });
});

test('loading the workflows makes no Intl formatter: the sandbox loads them once per workflow', () => {
  const made: unknown[] = [];
  const original = Intl.DateTimeFormat;
  Intl.DateTimeFormat = new Proxy(original, {
    construct: (target, args: ConstructorParameters<typeof Intl.DateTimeFormat>) => {
      made.push(args);
      return new target(...args);
    },
  });
  try {
    jest.isolateModules(() => require('../../workflows'));
  } finally {
    Intl.DateTimeFormat = original;
  }
  expect(made).toEqual([]);
});
