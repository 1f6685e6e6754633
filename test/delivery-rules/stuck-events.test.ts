import { dueSince, isStuck, type StuckFacts } from '../../src/delivery-rules/stuck-events';

const now = new Date('2025-07-15T10:30:00Z');
const minutesAgo = (minutes: number) => new Date(now.getTime() - minutes * 60_000);
const event = (facts: Partial<StuckFacts>): StuckFacts => ({
  status: 'waiting',
  attempts: 0,
  createdAt: minutesAgo(1),
  workflowStartedAt: null,
  nextAttemptAt: null,
  ...facts,
});

test('a waiting event is due since its workflow started, or since it was created while the relay has not started one', () => {
  expect(dueSince(event({ createdAt: minutesAgo(30) }))).toEqual(minutesAgo(30));
  expect(dueSince(event({ createdAt: minutesAgo(30), workflowStartedAt: minutesAgo(5) }))).toEqual(minutesAgo(5));
  expect(isStuck(event({ createdAt: minutesAgo(16) }), now, 15)).toBe(true);
  expect(isStuck(event({ createdAt: minutesAgo(30), workflowStartedAt: minutesAgo(16) }), now, 15)).toBe(true);
  // Started late (the relay or Temporal was down), then its first attempt is due from the start.
  expect(isStuck(event({ createdAt: minutesAgo(30), workflowStartedAt: minutesAgo(14) }), now, 15)).toBe(false);
});

test('a failed event is stuck once its next attempt is overdue by more than the limit', () => {
  expect(isStuck(event({ status: 'failed', attempts: 2, nextAttemptAt: minutesAgo(16) }), now, 15)).toBe(true);
  expect(isStuck(event({ status: 'failed', attempts: 2, nextAttemptAt: minutesAgo(14) }), now, 15)).toBe(false);
  expect(isStuck(event({ status: 'failed', attempts: 2, nextAttemptAt: minutesAgo(-60) }), now, 15)).toBe(false);
  expect(isStuck(event({ status: 'failed', attempts: 2, nextAttemptAt: null }), now, 15)).toBe(false);
});

test('"more than" the limit: exactly at it is not stuck yet', () => {
  expect(isStuck(event({ createdAt: minutesAgo(15) }), now, 15)).toBe(false);
  expect(isStuck(event({ createdAt: new Date(minutesAgo(15).getTime() - 1) }), now, 15)).toBe(true);
});

test('events that wait for nothing are never stuck, however old', () => {
  for (const status of ['delivered', 'max_retries_reached'] as const) {
    expect(isStuck(event({ status, attempts: 5, createdAt: minutesAgo(10_000), workflowStartedAt: minutesAgo(10_000) }), now, 15)).toBe(false);
  }
});
