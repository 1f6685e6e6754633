import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { RateLimiterPostgres, type RateLimiterRes } from 'rate-limiter-flexible';
import type { LoginLimits } from '../config';
import type { Db } from '../db/knex';
import { ApiError } from '../shared/errors';

/*
 * The failed-login limit, for every password check (token creation and HTTP Basic), after rate-limiter-flexible's
 * "login endpoint protection" recipe. Only checks that failed are counted, so a correct password is never refused
 * because of parallel requests or of someone else's guesses:
 *
 * - Hard limit per (user name, client address): after `maxFailuresPerClientAndUsername` failures in the window,
 *   that pair gets 429 with Retry-After until the window ends, also for the right password. The same user name from
 *   another address is not affected, so guessing from many addresses cannot lock the owner out.
 * - Per user name, across all addresses: after `freeFailuresPerUsername` failures, each further check of that name
 *   waits first, 0.25 s doubling with every failure up to `maxDelaySeconds`. It slows a guesser who rotates
 *   addresses and never refuses anyone. It runs before the check, not before the answer: a delayed "wrong" answer
 *   would tell a guesser who stops waiting early just as much.
 *
 * Counters live in Postgres (table `login_failures`), not in memory: API processes run side by side behind a load
 * balancer and restart, and an in-memory limit would be multiplied by the number of processes and forgotten on
 * every deploy. rate-limiter-flexible writes every query against that table; this module, which hands it the table's
 * name, is the table's owner, and nothing else touches it. Times are rate-limiter-flexible's (the system clock), not
 * the app's injectable clock.
 *
 * Concurrent guesses from one pair are all checked, since the counter is read before the check and written after,
 * but no more than the limit can tell the guesser anything: a failure counted past the limit answers 429 (not 401),
 * and a right password is refused with 429 when the pair reached its limit while it was being checked.
 */

export interface LoginAttempt {
  /** The user name tried. */
  username: string;
  /** The client address (ctx.ip). */
  clientIp: string;
}

export const tooManyFailures = (retryAfterSeconds: number) =>
  new ApiError('too_many_login_failures',
    `Too many failed logins; try again in ${retryAfterSeconds} seconds`,
    { 'Retry-After': String(retryAfterSeconds) },
  );

export interface LoginThrottle {
  /**
   * Runs one password check under the limits: its result when the password is right, undefined when it is wrong;
   * a 429 when this user name is locked for this client address.
   */
  check<T>(attempt: LoginAttempt, verify: () => Promise<T | undefined>): Promise<T | undefined>;
}

const FIRST_DELAY_SECONDS = 0.25;

/** The wait before a password check of a user name with `failures` recent failures (from all addresses). */
export function loginDelaySeconds(failures: number, limits: LoginLimits): number {
  const excess = failures - limits.freeFailuresPerUsername;
  return excess < 0 ? 0 : Math.min(FIRST_DELAY_SECONDS * 2 ** excess, limits.maxDelaySeconds);
}

// Hashed: a user name field sometimes receives a password typed into the wrong box; it must not be stored as typed.
const hashOf = (...parts: string[]) => createHash('sha256').update(parts.join('\u0000')).digest('hex');

export function createLoginThrottle(db: Db, limits: LoginLimits): LoginThrottle {
  const counter = (keyPrefix: string) =>
    new RateLimiterPostgres({
      storeClient: db,
      storeType: 'knex',
      tableName: 'login_failures',
      tableCreated: true, // by migration 013
      keyPrefix,
      points: limits.maxFailuresPerClientAndUsername,
      duration: limits.windowSeconds,
    });
  const perPair = counter('client-and-username');
  const perUsername = counter('username');
  const max = limits.maxFailuresPerClientAndUsername;

  const lockedUntilWindowEnds = (failures: RateLimiterRes) =>
    tooManyFailures(Math.max(1, Math.ceil(failures.msBeforeNext / 1000)));
  const refuseIfLocked = (failures: RateLimiterRes | null) => {
    if (failures && failures.consumedPoints >= max) throw lockedUntilWindowEnds(failures);
  };

  return {
    async check(attempt, verify) {
      const pairKey = hashOf(attempt.username, attempt.clientIp);
      const usernameKey = hashOf(attempt.username);
      const [pairFailures, usernameFailures] = await Promise.all([perPair.get(pairKey), perUsername.get(usernameKey)]);
      refuseIfLocked(pairFailures);
      const delay = loginDelaySeconds(usernameFailures?.consumedPoints ?? 0, limits);
      if (delay > 0) await sleep(delay * 1000);

      const result = await verify();
      if (result === undefined) {
        const [failures] = await Promise.all([perPair.penalty(pairKey), perUsername.penalty(usernameKey)]);
        if (failures.consumedPoints > max) throw lockedUntilWindowEnds(failures);
        return undefined;
      }
      const failuresNow = await perPair.get(pairKey);
      refuseIfLocked(failuresNow);
      // The pair's earlier mistakes are forgiven; the user name's count stays, it is a count of an attack, if any.
      if (failuresNow) await perPair.delete(pairKey);
      return result;
    },
  };
}
