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
