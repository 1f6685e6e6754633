import type { LoginLimits } from '../../src/config';
import { ApiError } from '../../src/shared/errors';
import { createPasswordChecks, type PasswordChecks } from '../../src/auth/password-checks';
import { hashPassword } from '../../src/auth/passwords';
import { setActive, setPassword, setStaff, upsertUser } from '../../src/auth/accounts';
import { clientNetworkOf, createLoginThrottle, type LoginAttempt, loginDelaySeconds, type LoginThrottle } from '../../src/auth/login-throttle';
import type { Db } from '../../src/db/knex';
import { createTestDatabase } from '../support/database';

/*
 * The limiter on its own, over a real database: what HTTP tests cannot arrange deterministically (a right password
 * whose pair is locked while it is being checked, two API processes, the end of the window). Then the password
 * checks it is part of, with remembered credentials.
 */

const LIMITS: LoginLimits = {
  maxFailuresPerClientAndUsername: 3,
  freeFailuresPerUsername: 2,
  maxDelaySeconds: 0.5,
  maxFailuresPerClient: 5,
  windowSeconds: 60,
  maxConcurrentChecks: 2,
  rememberSeconds: 60,
};
const USER = { id: 7 };

/** One password check under the throttle, whose password is right or wrong; `during` runs while it is checked. */
async function check(throttle: LoginThrottle, who: LoginAttempt, right: boolean, during?: () => Promise<void>) {
  const admitted = await throttle.admit(who);
  await admitted.startCheck();
  await during?.();
  if (!right) return admitted.failed().then(() => undefined);
  await admitted.succeeded();
  return USER;
}
const rightPassword = true;
const wrongPassword = false;

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
  for (let i = 0; i < n; i++) expect(await check(throttle, who, wrongPassword)).toBeUndefined();
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
  const racingGuesses = () => failTimes(throttle, LIMITS.maxFailuresPerClientAndUsername);
  const refused = await refusal(check(throttle, attempt(), rightPassword, racingGuesses));
  expect(refused).toMatchObject({ status: 429, code: 'too_many_login_failures' });
  expect(refused.retryAfter).toBeGreaterThan(LIMITS.windowSeconds - 5);
  expect(refused.retryAfter).toBeLessThanOrEqual(LIMITS.windowSeconds);
  // From another client the same password passes.
  expect(await check(throttle, attempt('192.0.2.2'), rightPassword)).toBe(USER);
});

test('API processes share the counts: failures through one lock the pair in another', async () => {
  const [first, second] = [createLoginThrottle(db, LIMITS), createLoginThrottle(db, LIMITS)];
  await failTimes(first, 2);
  await failTimes(second, 1);
  expect((await refusal(check(first, attempt(), rightPassword))).status).toBe(429);
  expect((await refusal(check(second, attempt(), rightPassword))).status).toBe(429);
});

test('the wait comes before the check, so a guesser cannot cut it short; it never refuses', async () => {
  const throttle = createLoginThrottle(db, LIMITS);
  for (const client of ['192.0.2.10', '192.0.2.11']) await failTimes(throttle, 2, attempt(client));
  // 4 failures of the user name, 2 free: 0.5 s before the next check of it, from anywhere.
  const started = performance.now();
  await throttle.admit(attempt('192.0.2.12'));
  expect(performance.now() - started).toBeGreaterThanOrEqual(450);
});

test('the pair is locked until the window that began with its first failure ends', async () => {
  const throttle = createLoginThrottle(db, LIMITS);
  await failTimes(throttle, LIMITS.maxFailuresPerClientAndUsername);
  // rate-limiter-flexible reads the system clock: only Date is faked, timers and I/O run as usual.
  jest.useFakeTimers({ doNotFake: [...ONLY_DATE_IS_FAKED], advanceTimers: true });
  try {
    jest.setSystemTime(Date.now() + 30_000);
    const refused = await refusal(check(throttle, attempt(), rightPassword));
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBeGreaterThan(25);
    expect(refused.retryAfter).toBeLessThanOrEqual(30);
    jest.setSystemTime(Date.now() + 30_000);
    expect(await check(throttle, attempt(), rightPassword)).toBe(USER);
  } finally {
    jest.useRealTimers();
  }
});

test('a client address that signed in with a user name is neither delayed by its failures nor under the address budget', async () => {
  const throttle = createLoginThrottle(db, LIMITS);
  const owner = attempt('192.0.2.20');
  expect(await check(throttle, owner, rightPassword)).toBe(USER);
  for (const client of ['192.0.2.21', '192.0.2.22', '192.0.2.23']) await failTimes(throttle, 2, attempt(client));
  // 6 failures of the user name, 2 free: a stranger waits 0.5 s before its check, the known owner does not wait.
  let started = performance.now();
  expect((await throttle.admit(owner)).knownClient).toBe(true);
  expect(performance.now() - started).toBeLessThan(250);
  started = performance.now();
  expect((await throttle.admit(attempt('192.0.2.24'))).knownClient).toBe(false);
  expect(performance.now() - started).toBeGreaterThanOrEqual(450);
  // Known to every process: the record is in Postgres.
  expect((await createLoginThrottle(db, LIMITS).admit(owner)).knownClient).toBe(true);
  // Known to this user name only.
  expect((await throttle.admit(attempt('192.0.2.20', 'another-name'))).knownClient).toBe(false);
});

test('a stranger address has a budget of failures across user names that parallel checks cannot overdraw', async () => {
  const throttle = createLoginThrottle(db, LIMITS);
  const client = '192.0.2.30';
  const names = Array.from({ length: LIMITS.maxFailuresPerClient + 4 }, (_, i) => `made-up-${i}`);
  const outcomes = await Promise.all(
    names.map((name) => check(throttle, attempt(client, name), wrongPassword).then(() => 'checked', (err: ApiError) => err.code)),
  );
  expect(outcomes.filter((outcome) => outcome === 'checked')).toHaveLength(LIMITS.maxFailuresPerClient);
  expect(outcomes.filter((outcome) => outcome === 'too_many_login_failures')).toHaveLength(4);
  // Refused before any check, with Retry-After, for every name this address never signed in with; other addresses pass.
  const refused = await refusal(check(throttle, attempt(client, 'yet-another'), rightPassword));
  expect(refused).toMatchObject({ status: 429, code: 'too_many_login_failures' });
  expect(refused.retryAfter).toBeGreaterThan(0);
  expect(await check(throttle, attempt('192.0.2.31', 'yet-another'), rightPassword)).toBe(USER);
});

test('a right password gives its point of the address budget back, so signing in never uses it up', async () => {
  const throttle = createLoginThrottle(db, LIMITS);
  const client = '192.0.2.40';
  for (let i = 0; i < LIMITS.maxFailuresPerClient * 2; i++) expect(await check(throttle, attempt(client, `new-user-${i}`), rightPassword)).toBe(USER);
  for (let i = 0; i < LIMITS.maxFailuresPerClient; i++) await failTimes(throttle, 1, attempt(client, `guessed-${i}`));
  expect((await refusal(check(throttle, attempt(client, 'and-another'), wrongPassword))).status).toBe(429);
  // A name this address signed in with before is not under the budget.
  expect(await check(throttle, attempt(client, 'new-user-0'), rightPassword)).toBe(USER);
});

/*
 * Remembered credentials: a remembered password is taken as right only while the account is exactly as it was when
 * the password was checked, whichever way it was changed, and never past the pair's lock.
 */
describe('remembered credentials', () => {
  const HOLDER = { username: 'kasse', password: 'Pizol-2844-m' };
  const CLIENT = '192.0.2.1';

  let checks: PasswordChecks;
  beforeEach(async () => {
    await upsertUser(db, { ...HOLDER, isStaff: true });
    checks = createPasswordChecks(db, LIMITS);
    // Checked once: remembered from here on.
    expect(await checks.check({ ...HOLDER, clientIp: CLIENT })).toMatchObject({ username: HOLDER.username, is_staff: true });
  });

  const check = (password = HOLDER.password, clientIp = CLIENT) => checks.check({ username: HOLDER.username, password, clientIp });

  test('remembered credentials answer with the account as it is now', async () => {
    expect(await check()).toMatchObject({ username: HOLDER.username, is_staff: true });
    await setStaff(db, HOLDER.username, false);
    expect(await check()).toMatchObject({ username: HOLDER.username, is_staff: false });
  });

  test('a password change ends the remembered password at once, also one made directly in the database', async () => {
    await setPassword(db, HOLDER.username, 'Neues-Passwort-1');
    expect(await check()).toBeUndefined();
    expect(await check('Neues-Passwort-1')).toBeDefined();
    // No token-version bump: only the password hash differs.
    await db('users').where({ username: HOLDER.username }).update({ password_hash: await hashPassword('Drittes-Passwort-2') });
    expect(await check('Neues-Passwort-1')).toBeUndefined();
  });

  test('a deactivation ends the remembered password at once, also one made directly in the database', async () => {
    await db('users').where({ username: HOLDER.username }).update({ is_active: false });
    expect(await check()).toBeUndefined();
    await db('users').where({ username: HOLDER.username }).update({ is_active: true });
    expect(await check()).toBeDefined();
    await setActive(db, HOLDER.username, false);
    expect(await check()).toBeUndefined();
  });

  test('another process does not share what this one remembered; a wrong password is never remembered as right', async () => {
    expect(await createPasswordChecks(db, LIMITS).check({ ...HOLDER, clientIp: CLIENT })).toBeDefined();
    expect(await check('wrong')).toBeUndefined();
    expect(await check('wrong')).toBeUndefined();
  });

  test('a pair locked by failures is refused even with remembered credentials', async () => {
    const guesser = '192.0.2.66';
    for (let i = 0; i < LIMITS.maxFailuresPerClientAndUsername; i++) expect(await check(`guess-${i}`, guesser)).toBeUndefined();
    const refused = await check(HOLDER.password, guesser).catch((err: ApiError) => err);
    expect(refused).toMatchObject({ status: 429, code: 'too_many_login_failures' });
    expect(await check()).toBeDefined();
  });
});

test('limits count an IPv4 address as itself, however written, and an IPv6 address by its /64 network', () => {
  expect(
    ['192.0.2.1', '::ffff:192.0.2.1', '::FFFF:192.0.2.1', '::ffff:c000:201', '2001:db8:1:2:3:4:5:6', '2001:DB8:1:2::9', '2001:db8:1:2:ffff::%eth0', '2001:db8::', '::1', 'fe80::1%lo'].map(clientNetworkOf),
  ).toEqual(['192.0.2.1', '192.0.2.1', '192.0.2.1', '192.0.2.1', '2001:db8:1:2::/64', '2001:db8:1:2::/64', '2001:db8:1:2::/64', '2001:db8:0:0::/64', '0:0:0:0::/64', 'fe80:0:0:0::/64']);
});

test('a guesser rotating through the addresses of one IPv6 /64 is one client', async () => {
  const throttle = createLoginThrottle(db, LIMITS);
  for (let i = 1; i <= LIMITS.maxFailuresPerClientAndUsername; i++) await failTimes(throttle, 1, attempt(`2001:db8:7:7::${i.toString(16)}`));
  expect((await refusal(check(throttle, attempt('2001:db8:7:7:ffff:ffff:ffff:ffff'), rightPassword))).status).toBe(429);
  expect(await check(throttle, attempt('2001:db8:7:8::1'), rightPassword)).toBe(USER);
});
