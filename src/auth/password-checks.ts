import type { LoginLimits } from '../config';
import type { Db } from '../db/knex';
import { createLoginThrottle } from './login-throttle';
import { createPasswordCheckSlots } from './password-check-slots';
import { findUserWithPasswordHash, type User } from '../users/user-store';
import { findAccountByCredentials, withoutPasswordHash } from './accounts';
import { createVerifiedCredentials } from './verified-credentials';

/*
 * Every password check of the API (token creation and HTTP Basic), in this order:
 * 1. credentials this process verified moments ago and whose account is unchanged pass at once, under the pair's
 *    lock alone (src/auth/verified-credentials.ts);
 * 2. otherwise the failed-login limits admit the check or refuse it (src/auth/login-throttle.ts);
 * 3. the check waits for one of the process's scrypt slots, known clients first (src/auth/password-check-slots.ts),
 *    unless the same credentials are being checked already: then it shares that check;
 * 4. its outcome is counted, and a right password is remembered.
 * So a correct password never waits for someone else's failures, and what strangers can make the process compute is
 * bounded per address and in total.
 */

export interface PasswordCheckAttempt {
  username: string;
  password: string;
  /** The client address (ctx.ip). */
  clientIp: string;
}

export interface PasswordChecks {
  /** The active user these credentials belong to, or undefined when they are wrong; a 429 or 503 when refused. */
  check(attempt: PasswordCheckAttempt): Promise<User | undefined>;
}

export function createPasswordChecks(db: Db, limits: LoginLimits): PasswordChecks {
  const throttle = createLoginThrottle(db, limits);
  const slots = createPasswordCheckSlots(limits.maxConcurrentChecks);
  const verified = createVerifiedCredentials(limits.rememberSeconds);

  async function recall({ username, password, clientIp }: PasswordCheckAttempt): Promise<User | undefined> {
    if (!verified.remembered(username, password)) return undefined;
    const [admitted, account] = await Promise.all([
      throttle.admitRemembered({ username, clientIp }),
      findUserWithPasswordHash(db, username),
    ]);
    if (!account || !verified.holdFor(username, password, account)) return undefined;
    await admitted.succeeded();
    return withoutPasswordHash(account);
  }

  return {
    async check(attempt) {
      const remembered = await recall(attempt);
      if (remembered) return remembered;
      const { username, password, clientIp } = attempt;
      const admitted = await throttle.admit({ username, clientIp });
      const account = await verified.checkOnce(username, password, async () => {
        await admitted.startCheck();
        return slots.run(admitted.knownClient, () => findAccountByCredentials(db, username, password));
      });
      if (!account) {
        await admitted.failed();
        return undefined;
      }
      await admitted.succeeded();
      return withoutPasswordHash(account);
    },
  };
}
