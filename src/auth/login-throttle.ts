import { createHash } from 'node:crypto';
import { isIPv6 } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { LoginLimits } from '../config';
import type { Db } from '../db/knex';
import { ApiError } from '../shared/errors';

/*
 * The failed-login limits, for every password check (token creation and HTTP Basic), after rate-limiter-flexible's
 * "login endpoint protection" recipe. Only checks that failed are counted, so a correct password is never refused
 * because of parallel requests or of someone else's guesses, and never waits for them:
 *
 * - Hard limit per (user name, client address): after `maxFailuresPerClientAndUsername` failures in the window,
 *   that pair gets 429 with Retry-After until the window ends, also for the right password. The same user name from
 *   another address is not affected, so guessing from many addresses cannot lock the owner out.
 * - A client address that signed in with a user name (a "known client" of that name, remembered for 30 days) is
 *   under the hard limit alone. Everyone else is a stranger to that name and also under the two limits below: they
 *   are what an attacker meets, and the owner calling from where it always calls never does.
 * - Per user name, for strangers: after `freeFailuresPerUsername` failures of the name (from all addresses), each
 *   further check of it by a stranger waits first, 0.25 s doubling with every failure up to `maxDelaySeconds`. It
 *   slows a guesser who rotates addresses and never refuses anyone. It runs before the check, not before the answer:
 *   a delayed "wrong" answer would tell a guesser who stops waiting early just as much.
 * - Per client address, for strangers, across user names: a budget of `maxFailuresPerClient` failed checks in the
 *   window; beyond it the address gets 429 before any check. A check takes its point right before the KDF runs (so
 *   parallel guesses cannot overdraw the budget) and returns it when the password was right; a request that shares
 *   the check of identical credentials under way takes none. It bounds the scrypt work one address can cause with
 *   made-up user names, which no per-name limit sees.
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
  /** The client address (ctx.ip); counted by its network, `clientNetworkOf`. */
  clientIp: string;
}

export const tooManyFailures = (retryAfterSeconds: number) =>
  new ApiError('too_many_login_failures',
    `Too many failed logins; try again in ${retryAfterSeconds} seconds`,
    { 'Retry-After': String(retryAfterSeconds) },
  );

/** One password check under the limits, admitted: report how it ended. */
export interface AdmittedCheck {
  /** This client address signed in with this user name before (within KNOWN_CLIENT_DAYS). */
  knownClient: boolean;
  /**
   * Right before the KDF runs (not for a check that joins one of the same credentials under way): a stranger takes a
   * point of its address's budget, or gets a 429.
   */
  startCheck(): Promise<void>;
  /** The password was right: the pair's mistakes are forgiven; a 429 when the pair got locked meanwhile. */
  succeeded(): Promise<void>;
  /** The password was wrong: counted; a 429 instead of the 401 when this failure is past the pair's limit. */
  failed(): Promise<void>;
}

export interface LoginThrottle {
  /**
   * Before a password check: a 429 when the pair is locked. A stranger to the user name is also refused when its
   * address has spent its budget, and waits the name's delay; a known client is not.
   */
  admit(attempt: LoginAttempt): Promise<AdmittedCheck>;
  /**
   * Credentials this process verified a moment ago, taken as right without a check: only the pair's lock applies (a
   * guesser locked out must not get a right answer from the memory of someone else's sign-in).
   */
  admitRemembered(attempt: LoginAttempt): Promise<Pick<AdmittedCheck, 'succeeded'>>;
}

const FIRST_DELAY_SECONDS = 0.25;
/** How long a client address stays known to a user name after signing in with it. */
const KNOWN_CLIENT_DAYS = 30;

/** The wait before a password check of a user name with `failures` recent failures (from all addresses). */
export function loginDelaySeconds(failures: number, limits: LoginLimits): number {
  const excess = failures - limits.freeFailuresPerUsername;
  return excess < 0 ? 0 : Math.min(FIRST_DELAY_SECONDS * 2 ** excess, limits.maxDelaySeconds);
}

// Hashed: a user name field sometimes receives a password typed into the wrong box; it must not be stored as typed.
const hashOf = (...parts: string[]) => createHash('sha256').update(parts.join('\u0000')).digest('hex');

/**
 * The client the limits count: an IPv4 address (also written IPv4-mapped, `::ffff:192.0.2.1`), or the /64 network
 * of an IPv6 address. One host or household gets a /64 of its own and can send from any of its 2^64 addresses
 * (and privacy extensions change the address daily), so per address the limits would count nothing.
 */
export function clientNetworkOf(clientIp: string): string {
  const address = clientIp.split('%')[0];
  if (!isIPv6(address)) return address;
  // The canonical form: lower case, at most one `::`, an IPv4 tail written as two groups.
  const canonical = new URL(`http://[${address}]`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (mapped) {
    const [high, low] = [parseInt(mapped[1], 16), parseInt(mapped[2], 16)];
    return [high >> 8, high & 255, low >> 8, low & 255].join('.');
  }
  const [head, tail] = canonical.split('::');
  const groupsOf = (part: string | undefined) => (part ? part.split(':') : []);
  const groups =
    tail === undefined ? groupsOf(head) : [...groupsOf(head), ...Array<string>(8 - groupsOf(head).length - groupsOf(tail).length).fill('0'), ...groupsOf(tail)];
  return `${groups.slice(0, 4).join(':')}::/64`;
}

export function createLoginThrottle(db: Db, limits: LoginLimits): LoginThrottle {
  const counter = (keyPrefix: string, points: number, duration = limits.windowSeconds) =>
    new RateLimiterPostgres({
      storeClient: db,
      storeType: 'knex',
      tableName: 'login_failures',
      tableCreated: true, // by migration 013
      keyPrefix,
      points,
      duration,
      // One of them deletes the expired rows of the table they share.
      clearExpiredByTimeout: keyPrefix === 'client-and-username',
    });
  const max = limits.maxFailuresPerClientAndUsername;
  const perPair = counter('client-and-username', max);
  const perUsername = counter('username', max);
  const perClient = counter('client', limits.maxFailuresPerClient);
  const knownClients = counter('known-client', 1, KNOWN_CLIENT_DAYS * 24 * 60 * 60);

  const retryAfter = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));
  const lockedUntilWindowEnds = (failures: RateLimiterRes) => tooManyFailures(retryAfter(failures));
  const refuseIfLocked = (failures: RateLimiterRes | null) => {
    if (failures && failures.consumedPoints >= max) throw lockedUntilWindowEnds(failures);
  };

  /** Takes one point of the address's budget, or refuses: consume is one atomic upsert, so parallel checks count. */
  async function spendClientBudget(clientKey: string): Promise<void> {
    try {
      await perClient.consume(clientKey);
    } catch (err) {
      if (err instanceof RateLimiterRes) throw tooManyFailures(retryAfter(err));
      throw err;
    }
  }

  return {
    async admit(attempt) {
      const client = clientNetworkOf(attempt.clientIp);
      const pairKey = hashOf(attempt.username, client);
      const usernameKey = hashOf(attempt.username);
      const clientKey = hashOf(client);
      const [pairFailures, usernameFailures, known, clientFailures] = await Promise.all([
        perPair.get(pairKey),
        perUsername.get(usernameKey),
        knownClients.get(pairKey),
        perClient.get(clientKey),
      ]);
      refuseIfLocked(pairFailures);
      const knownClient = known !== null;
      if (!knownClient) {
        if (clientFailures && clientFailures.consumedPoints >= limits.maxFailuresPerClient) throw tooManyFailures(retryAfter(clientFailures));
        const delay = loginDelaySeconds(usernameFailures?.consumedPoints ?? 0, limits);
        if (delay > 0) await sleep(delay * 1000);
      }
      let budgetSpent = false;
      return {
        knownClient,
        async startCheck() {
          if (knownClient) return;
          await spendClientBudget(clientKey);
          budgetSpent = true;
        },
        async failed() {
          const [failures] = await Promise.all([perPair.penalty(pairKey), perUsername.penalty(usernameKey)]);
          if (failures.consumedPoints > max) throw lockedUntilWindowEnds(failures);
        },
        async succeeded() {
          const failuresNow = await perPair.get(pairKey);
          refuseIfLocked(failuresNow);
          // The pair's earlier mistakes are forgiven; the user name's count stays, it is a count of an attack, if any.
          await Promise.all([
            failuresNow ? perPair.delete(pairKey) : undefined,
            budgetSpent ? perClient.reward(clientKey) : undefined,
            // Known from now on, for KNOWN_CLIENT_DAYS from this sign-in (rewritten by each later check that ran).
            knownClients.set(pairKey, 1, KNOWN_CLIENT_DAYS * 24 * 60 * 60),
          ]);
        },
      };
    },

    async admitRemembered(attempt) {
      const pairKey = hashOf(attempt.username, clientNetworkOf(attempt.clientIp));
      const pairFailures = await perPair.get(pairKey);
      refuseIfLocked(pairFailures);
      return {
        async succeeded() {
          if (pairFailures) await perPair.delete(pairKey);
        },
      };
    },
  };
}
