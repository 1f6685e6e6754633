import { DELIVERY_STATUS_LABELS, statusAfterAttempt } from '../../src/delivery-rules/delivery-status';

test('German labels as the admin shows them', () => {
  expect(DELIVERY_STATUS_LABELS).toEqual({
    waiting: 'Wartend',
    delivered: 'Zugestellt',
    failed: 'Fehlgeschlagen',
    max_retries_reached: 'Maximale Wiederholungen erreicht',
  });
});

describe('scheduled attempts follow the spec’s state table', () => {
  test('waiting → delivered on 2xx, → failed otherwise', () => {
    expect(statusAfterAttempt('waiting', { kind: 'scheduled', number: 1, outcome: 'delivered' })).toBe('delivered');
    expect(statusAfterAttempt('waiting', { kind: 'scheduled', number: 1, outcome: 'failed' })).toBe('failed');
  });

  test('failed → delivered on a successful retry', () => {
    expect(statusAfterAttempt('failed', { kind: 'scheduled', number: 3, outcome: 'delivered' })).toBe('delivered');
  });

  test('failed → failed while fewer than five attempts were made, → max retries reached on the fifth', () => {
    for (const number of [2, 3, 4]) {
      expect(statusAfterAttempt('failed', { kind: 'scheduled', number, outcome: 'failed' })).toBe('failed');
    }
    expect(statusAfterAttempt('failed', { kind: 'scheduled', number: 5, outcome: 'failed' })).toBe('max_retries_reached');
  });
});

describe('manual attempts never count towards the five', () => {
  test('a successful one delivers, from backoff or after max retries', () => {
    expect(statusAfterAttempt('failed', { kind: 'manual', outcome: 'delivered' })).toBe('delivered');
    expect(statusAfterAttempt('max_retries_reached', { kind: 'manual', outcome: 'delivered' })).toBe('delivered');
  });

  test('a failed one leaves the status as it was', () => {
    expect(statusAfterAttempt('failed', { kind: 'manual', outcome: 'failed' })).toBe('failed');
    expect(statusAfterAttempt('max_retries_reached', { kind: 'manual', outcome: 'failed' })).toBe('max_retries_reached');
    expect(statusAfterAttempt('waiting', { kind: 'manual', outcome: 'failed' })).toBe('failed');
  });
});

test('a delivered event stays delivered whatever fails afterwards', () => {
  expect(statusAfterAttempt('delivered', { kind: 'manual', outcome: 'failed' })).toBe('delivered');
  expect(statusAfterAttempt('delivered', { kind: 'scheduled', number: 5, outcome: 'failed' })).toBe('delivered');
});
