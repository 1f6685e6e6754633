import { createPasswordChecks, type PasswordChecks } from '../../src/auth/password-checks';
import { hashPassword } from '../../src/auth/passwords';
import { setActive, setPassword, setStaff, upsertUser } from '../../src/auth/users';
import type { LoginLimits } from '../../src/config';
import type { Db } from '../../src/db/knex';
import { ApiError } from '../../src/shared/errors';
import { createTestDatabase } from '../support/database';

/*
 * Remembered credentials over a real database: a remembered password is taken as right only while the account is
 * exactly as it was when the password was checked, whichever way it was changed, and never past the pair's lock.
 */

const LIMITS: LoginLimits = {
  maxFailuresPerClientAndUsername: 3,
  freeFailuresPerUsername: 10,
  maxDelaySeconds: 0.5,
  maxFailuresPerClient: 30,
  windowSeconds: 60,
  maxConcurrentChecks: 2,
  rememberSeconds: 60,
};
const HOLDER = { username: 'kasse', password: 'Pizol-2844-m' };
const CLIENT = '192.0.2.1';

let db: Db;
let checks: PasswordChecks;
beforeAll(async () => {
  ({ db } = await createTestDatabase());
});
afterAll(async () => {
  await db?.destroy();
});
beforeEach(async () => {
  await db('login_failures').delete();
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
