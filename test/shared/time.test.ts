import { DateTime } from 'luxon';
import { formatTimestamp } from '../../src/shared/time';

describe('formatTimestamp', () => {
  test('summer time in Switzerland is +02:00, milliseconds dropped', () => {
    const instant = new Date('2025-07-15T10:30:00Z');
    expect(formatTimestamp(instant, 'swiss-local')).toBe('2025-07-15T12:30:00+02:00');
    expect(formatTimestamp(instant, 'utc')).toBe('2025-07-15T10:30:00Z');
  });

  test('winter time is +01:00, across the October change', () => {
    expect(formatTimestamp(new Date('2025-10-26T00:30:00Z'), 'swiss-local')).toBe('2025-10-26T02:30:00+02:00');
    expect(formatTimestamp(new Date('2025-10-26T01:30:00Z'), 'swiss-local')).toBe('2025-10-26T02:30:00+01:00');
  });

  test('whole seconds carry no fraction', () => {
    expect(formatTimestamp(new Date('2025-01-02T03:04:05Z'), 'utc')).toBe('2025-01-02T03:04:05Z');
  });
});

describe('formatTimestamp renders exactly what luxon renders', () => {
  // The reference: the zone's rules as luxon (Intl) knows them, asked for every single instant.
  const reference = (instant: Date, style: 'swiss-local' | 'utc') =>
    DateTime.fromJSDate(instant, { zone: style === 'utc' ? 'utc' : 'Europe/Zurich' })
      .startOf('second')
      .toISO({ suppressMilliseconds: true });

  const expectSame = (instants: Date[]) => {
    const render = (format: typeof reference) =>
      instants.flatMap((instant) => [`${instant.toISOString()} ${format(instant, 'swiss-local')}`, format(instant, 'utc')]);
    expect(render(formatTimestamp)).toEqual(render(reference));
  };

  test('every 7 minutes and 13.5 seconds around both changes of 2024 and 2025', () => {
    const around = (utc: string) =>
      Array.from({ length: 400 }, (_, i) => new Date(Date.parse(utc) - 24 * 3_600_000 + i * 433_500));
    expectSame(['2024-03-31T01:00:00Z', '2024-10-27T01:00:00Z', '2025-03-30T01:00:00Z', '2025-10-26T01:00:00Z'].flatMap(around));
  });

  test('instants spread over 1850 to 2100, with milliseconds, and before 1000 and after 9999', () => {
    const spread = Array.from({ length: 2_000 }, (_, i) => new Date(Date.UTC(1850, 0, 1) + i * 3_944_592_003_093 / 1_000));
    expectSame([...spread, new Date('1853-07-15T23:30:00Z'), new Date('1894-05-31T23:45:00Z'), new Date('0999-12-31T23:59:59.999Z'), new Date(Date.UTC(10000, 0, 1, 0, 30))]);
  });

  test('an invalid date renders as luxon renders it', () => {
    expect(formatTimestamp(new Date(Number.NaN), 'utc')).toBe(reference(new Date(Number.NaN), 'utc'));
  });
});
