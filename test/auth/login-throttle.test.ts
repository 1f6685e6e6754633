import type { LoginLimits } from '../../src/config';
import { ApiError } from '../../src/shared/errors';
import { createLoginThrottle, loginDelaySeconds, type LoginThrottle } from '../../src/auth/login-throttle';
import type { Db } from '../../src/db/knex';
import { createTestDatabase } from '../support/database';

/*
 * The limiter on its own, over a real database: what HTTP tests cannot arrange deterministically (a right password
 * whose pair is locked while it is being checked, two API processes, the end of the window).
 */

const LIMITS: LoginLimits = { maxFailuresPerClientAndUsername: 3, freeFailuresPerUsername: 2, maxDelaySeconds: 0.5, windowSeconds: 60 };
const USER = { id: 7 };
const rightPassword = async () => USER;
const wrongPassword = async () => undefined;

let db: Db;
beforeAll(async () => {
  ({ db } = await createTestDatabase());
});
afterAll(async () => {
  await db?.destroy();
});
beforeEach(async () => {
  await db('login_failures').delete();
});

const ONLY_DATE_IS_FAKED = [
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
] as const;

const attempt = (clientIp = '192.0.2.1', username = 'crm-sync') => ({ username, clientIp });

async function refusal(check: Promise<unknown>) {
  const error = await check.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(ApiError);
  const { status, code, headers } = error as ApiError;
  return { status, code, retryAfter: Number(headers?.['Retry-After']) };
}

async function failTimes(throttle: LoginThrottle, n: number, who = attempt()) {
  for (let i = 0; i < n; i++) expect(await throttle.check(who, wrongPassword)).toBeUndefined();
}

test('the delay grows with the failures of a user name beyond the free ones, doubling, up to the cap', () => {
  const limits = { ...LIMITS, freeFailuresPerUsername: 10, maxDelaySeconds: 5 };
  expect([0, 9, 10, 11, 12, 13, 14, 15, 100].map((failures) => loginDelaySeconds(failures, limits))).toEqual([
    0, 0, 0.25, 0.5, 1, 2, 4, 5, 5,
  ]);
  expect(loginDelaySeconds(50, { ...limits, maxDelaySeconds: 0 })).toBe(0);
});

test('a right password is refused when its pair reached the limit while it was being checked', async () => {
  const throttle = createLoginThrottle(db, LIMITS);
  // The failures of concurrent guesses from the same client land during this check.
  const racingGuesses = async () => {
    await failTimes(throttle, LIMITS.maxFailuresPerClientAndUsername);
    return USER;
  };
  const refused = await refusal(throttle.check(attempt(), racingGuesses));
  expect(refused).toMatchObject({ status: 429, code: 'too_many_login_failures' });
  expect(refused.retryAfter).toBeGreaterThan(LIMITS.windowSeconds - 5);
  expect(refused.retryAfter).toBeLessThanOrEqual(LIMITS.windowSeconds);
  // From another client the same password passes.
  expect(await throttle.check(attempt('192.0.2.2'), rightPassword)).toBe(USER);
});

test('API processes share the counts: failures through one lock the pair in another', async () => {
  const [first, second] = [createLoginThrottle(db, LIMITS), createLoginThrottle(db, LIMITS)];
  await failTimes(first, 2);
  await failTimes(second, 1);
  expect((await refusal(first.check(attempt(), rightPassword))).status).toBe(429);
  expect((await refusal(second.check(attempt(), rightPassword))).status).toBe(429);
});

test('the wait comes before the check, so a guesser cannot cut it short; it never refuses', async () => {
  const throttle = createLoginThrottle(db, LIMITS);
  for (const client of ['192.0.2.10', '192.0.2.11']) await failTimes(throttle, 2, attempt(client));
  // 4 failures of the user name, 2 free: 0.5 s before the next check of it, from anywhere.
  const started = performance.now();
  let checkedAfter = 0;
  const result = await throttle.check(attempt('192.0.2.12'), async () => {
    checkedAfter = performance.now() - started;
    return USER;
  });
  expect(result).toBe(USER);
  expect(checkedAfter).toBeGreaterThanOrEqual(450);
});

test('the pair is locked until the window that began with its first failure ends', async () => {
  const throttle = createLoginThrottle(db, LIMITS);
  await failTimes(throttle, LIMITS.maxFailuresPerClientAndUsername);
  // rate-limiter-flexible reads the system clock: only Date is faked, timers and I/O run as usual.
  jest.useFakeTimers({ doNotFake: [...ONLY_DATE_IS_FAKED], advanceTimers: true });
  try {
    jest.setSystemTime(Date.now() + 30_000);
    const refused = await refusal(throttle.check(attempt(), rightPassword));
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBeGreaterThan(25);
    expect(refused.retryAfter).toBeLessThanOrEqual(30);
    jest.setSystemTime(Date.now() + 30_000);
    expect(await throttle.check(attempt(), rightPassword)).toBe(USER);
  } finally {
    jest.useRealTimers();
  }
});
