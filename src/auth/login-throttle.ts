import { createHash } from 'node:crypto';
import type { LoginLimits, ThrottleLimit } from '../config';
import type { Db } from '../db/knex';
import { ApiError } from '../shared/errors';
import type { Clock } from './tokens';

/*
 * The failed-login limiter, for every password check (token creation and HTTP Basic): at most `maxFailures`
 * failed checks per user name and per client address in a fixed window; beyond that, a 429 with Retry-After until
 * the window ends, without checking the password (else guessing would go on, only answered later).
 *
 * Counters live in Postgres, not in memory: API processes run side by side behind a load balancer and restart,
 * and an in-memory limit would be multiplied by the number of processes and forgotten on every deploy. The cost is
 * two small writes around a check that already spends one scrypt run (tens of milliseconds).
 *
 * A slot is taken before the password is checked and given back on success, so that many concurrent guesses
 * cannot all pass the check before the first failure is counted.
 */

export interface LoginAttempt {
  /** The user name tried, when the request carried one. */
  username?: string;
  /** The client address as the nearest proxy saw it (ctx.ip). */
  clientIp: string;
}

interface Counter {
  key: string;
  limit: ThrottleLimit;
  /** What a success does to the counter: forget the failures of a user name, give back the address's slot. */
  onSuccess: 'clear' | 'release';
}

// Hashed: a user name field sometimes receives a password typed into the wrong box; it must not be stored as typed.
const keyOf = (kind: string, value: string) => createHash('sha256').update(`${kind}\u0000${value}`).digest('hex');

function countersOf(limits: LoginLimits, attempt: LoginAttempt): Counter[] {
  const counters: Counter[] = [{ key: keyOf('client', attempt.clientIp), limit: limits.perClient, onSuccess: 'release' }];
  if (attempt.username !== undefined) {
    counters.push({ key: keyOf('username', attempt.username), limit: limits.perUsername, onSuccess: 'clear' });
  }
  return counters;
}

export const tooManyFailures = (retryAfterSeconds: number) =>
  new ApiError('too_many_login_failures',
    `Too many failed logins; try again in ${retryAfterSeconds} seconds`,
    { 'Retry-After': String(retryAfterSeconds) },
  );

export interface LoginThrottle {
  /** Takes a slot for one password check; a 429 when a counter is past its limit. */
  reserve(attempt: LoginAttempt): Promise<void>;
  /** The password was right: the user name's failures are forgotten, the address gets its slot back. */
  succeeded(attempt: LoginAttempt): Promise<void>;
}

/**
 * Defaults (configurable): 10 failures per user name, 30 per address (several people or one integration may share
 * an address behind NAT), in windows of 15 minutes: a person who mistypes never gets there; a guesser is held to
 * 40 guesses an hour per account.
 */
export function createLoginThrottle(db: Db, clock: Clock, limits: LoginLimits): LoginThrottle {
  const longestWindow = Math.max(limits.perUsername.windowSeconds, limits.perClient.windowSeconds);
  return {
    async reserve(attempt) {
      const now = clock();
      let retryAfter = 0;
      for (const { key, limit } of countersOf(limits, attempt)) {
        const windowStart = new Date((now - limit.windowSeconds) * 1000);
        // One statement per counter: a new window starts when the old one has passed.
        const { rows } = await db.raw(
          `INSERT INTO login_failures AS f (key, failures, window_started_at) VALUES (?, 1, ?)
           ON CONFLICT (key) DO UPDATE SET
             failures = CASE WHEN f.window_started_at <= ? THEN 1 ELSE f.failures + 1 END,
             window_started_at = CASE WHEN f.window_started_at <= ? THEN EXCLUDED.window_started_at ELSE f.window_started_at END
           RETURNING failures, window_started_at`,
          [key, new Date(now * 1000), windowStart, windowStart],
        );
        const { failures, window_started_at: started } = rows[0] as { failures: number; window_started_at: Date };
        if (failures > limit.maxFailures) {
          const endsIn = Math.ceil(started.getTime() / 1000 + limit.windowSeconds - now);
          retryAfter = Math.max(retryAfter, endsIn, 1);
        }
      }
      // Windows that have passed are of no use; the index keeps this cheap.
      await db('login_failures').where('window_started_at', '<=', new Date((now - longestWindow) * 1000)).delete();
      if (retryAfter > 0) throw tooManyFailures(retryAfter);
    },

    async succeeded(attempt) {
      for (const { key, onSuccess } of countersOf(limits, attempt)) {
        if (onSuccess === 'clear') await db('login_failures').where({ key }).delete();
        else await db('login_failures').where({ key }).andWhere('failures', '>', 0).decrement('failures', 1);
      }
    },
  };
}
