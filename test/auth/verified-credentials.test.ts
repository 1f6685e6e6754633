import { createVerifiedCredentials } from '../../src/auth/verified-credentials';
import type { UserWithPasswordHash } from '../../src/users/user-store';

/* Sharing a check of identical credentials under way, in memory: which outcomes are shared, and what is remembered. */

const ACCOUNT: UserWithPasswordHash = { id: 1, username: 'a', is_staff: true, is_active: true, token_version: 1, password_hash: 'scrypt$…' };

test('identical credentials checked at once share one check; others, and later ones, run their own', async () => {
  const verified = createVerifiedCredentials(60);
  let runs = 0;
  const check = async () => (runs++, ACCOUNT);
  const results = await Promise.all([
    verified.checkOnce('a', 'pw', check),
    verified.checkOnce('a', 'pw', check),
    verified.checkOnce('a', 'other', check),
    // A user name and password that would join into the same string with a separator.
    verified.checkOnce('a\u0000pw', '', check),
  ]);
  expect(results).toEqual([ACCOUNT, ACCOUNT, ACCOUNT, ACCOUNT]);
  expect(runs).toBe(3);
  await verified.checkOnce('a', 'pw', check);
  expect(runs).toBe(4);
  expect(verified.remembered('a', 'pw')).toBe(true);
  expect(verified.holdFor('a', 'pw', { ...ACCOUNT, token_version: 2 })).toBe(false);
  expect(verified.remembered('a', 'pw')).toBe(false);
});

test('a check refused before it ran is not shared: the joining one runs its own', async () => {
  const verified = createVerifiedCredentials(60);
  const refused = verified.checkOnce('a', 'pw', () => Promise.reject(new Error('429 for that client')));
  const joined = verified.checkOnce('a', 'pw', async () => ACCOUNT);
  await expect(refused).rejects.toThrow('429 for that client');
  expect(await joined).toBe(ACCOUNT);
});

test('a wrong password is shared but never remembered; with 0 seconds nothing is', async () => {
  const verified = createVerifiedCredentials(60);
  expect(await verified.checkOnce('a', 'wrong', async () => undefined)).toBeUndefined();
  expect(verified.remembered('a', 'wrong')).toBe(false);
  const forgetful = createVerifiedCredentials(0);
  await forgetful.checkOnce('a', 'pw', async () => ACCOUNT);
  expect(forgetful.remembered('a', 'pw')).toBe(false);
});
