import { createHmac, randomBytes } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { UserWithPasswordHash } from '../users/user-store';

/*
 * Credentials this process verified a moment ago (`LOGIN_REMEMBER_SECONDS`), so that an integration that sends HTTP
 * Basic on every request pays one scrypt run per minute instead of one per request, and its requests never wait
 * for a password check: not behind the failed-login delay, not behind a flood of strangers' checks.
 *
 * Neither the password nor anything that could be checked against a guess offline is kept: the key is an HMAC of
 * user name and password under a random key of this process, which never leaves its memory. What is remembered is
 * the account exactly as it was when the password was checked (an HMAC of id, activity, staff flag, token version
 * and password hash); the caller reads the account again and takes the credentials as verified only when it is
 * still that account. So a password change, deactivation, demotion or token-version bump takes effect at once,
 * also when it was made by another process or directly in the database.
 *
 * Identical credentials checked at the same moment (an integration's burst of parallel requests) share one check.
 */

/** At most this many credentials are remembered (the least recently used go first). */
const MAX_ENTRIES = 1_000;

export interface VerifiedCredentials {
  /** Whether these credentials were verified within the remembered time (then read the account and ask `holdFor`). */
  remembered(username: string, password: string): boolean;
  /** Whether the remembered verification was of this account as it is now; forgets it otherwise. */
  holdFor(username: string, password: string, account: UserWithPasswordHash): boolean;
  /**
   * Runs the password check, or joins the one of the same credentials under way (its outcome, right or wrong, is
   * this one's too; if it was refused, this one runs its own); a right password is remembered.
   */
  checkOnce(
    username: string,
    password: string,
    check: () => Promise<UserWithPasswordHash | undefined>,
  ): Promise<UserWithPasswordHash | undefined>;
}

export function createVerifiedCredentials(rememberSeconds: number): VerifiedCredentials {
  const secret = randomBytes(32);
  // JSON, not a separator: a separator inside a user name or password would let two pairs share a key.
  const mac = (...parts: Array<string | number | boolean>) => createHmac('sha256', secret).update(JSON.stringify(parts)).digest('base64url');
  const keyOf = (username: string, password: string) => mac(username, password);
  const stateOf = (account: UserWithPasswordHash) =>
    mac(account.id, account.is_active, account.is_staff, account.token_version, account.password_hash);

  const underway = new Map<string, Promise<UserWithPasswordHash | undefined>>();
  const verified = new LRUCache<string, string>({ max: MAX_ENTRIES, ttl: rememberSeconds * 1000 });
  return {
    remembered: (username, password) => verified.has(keyOf(username, password)),
    holdFor(username, password, account) {
      const key = keyOf(username, password);
      const holds = verified.get(key) === stateOf(account);
      if (!holds) verified.delete(key);
      return holds;
    },
    checkOnce(username, password, check) {
      const key = keyOf(username, password);
      const joined = underway.get(key);
      let result: Promise<UserWithPasswordHash | undefined>;
      if (joined) {
        // A check refused before it ran (the other client's limits) is no outcome to share: this one runs its own.
        result = joined.catch(() => check());
      } else {
        result = check().finally(() => underway.delete(key));
        underway.set(key, result);
      }
      return result.then((account) => {
        // lru-cache reads a ttl of 0 as "no expiry"; 0 here means "never remember".
        if (account && rememberSeconds > 0) verified.set(key, stateOf(account));
        return account;
      });
    },
  };
}
