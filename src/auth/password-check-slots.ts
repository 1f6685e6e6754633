import { ApiError } from '../shared/errors';

/*
 * How many password checks (scrypt runs, 32 MiB and ~0.1 s of a CPU each) run at once in this process. scrypt runs
 * on libuv's thread pool (4 threads unless UV_THREADPOOL_SIZE says otherwise), which DNS lookups, file access and
 * the decompression of request bodies share: without a bound, a flood of wrong logins takes every thread and every
 * other request waits behind it. Checks beyond the bound wait in line, the known clients' line first (a client
 * address that signed in with that user name before, src/auth/login-throttle.ts), so a flood of strangers delays
 * strangers. The strangers' line is bounded: beyond it a check is refused at once (503 with Retry-After) instead of
 * waiting for minutes.
 */

/** Strangers' checks that may wait per slot; at ~0.1 s a check that is about a second and a half of waiting. */
const WAITING_STRANGERS_PER_SLOT = 16;

const tooManyPasswordChecks = () =>
  new ApiError('too_many_password_checks', 'Too many password checks are under way; try again in a second', { 'Retry-After': '1' });

export interface PasswordCheckSlots {
  /** Runs the check when a slot is free: known clients before strangers; a 503 when the strangers' line is full. */
  run<T>(knownClient: boolean, check: () => Promise<T>): Promise<T>;
}

export function createPasswordCheckSlots(concurrency: number): PasswordCheckSlots {
  let running = 0;
  const known: Array<() => void> = [];
  const strangers: Array<() => void> = [];

  const startNext = () => {
    const next = known.shift() ?? strangers.shift();
    if (next) next();
    else running--;
  };

  const slot = (knownClient: boolean): Promise<void> => {
    if (running < concurrency) {
      running++;
      return Promise.resolve();
    }
    const line = knownClient ? known : strangers;
    if (!knownClient && line.length >= WAITING_STRANGERS_PER_SLOT * concurrency) throw tooManyPasswordChecks();
    // The slot passes from the check that ends to this one: `running` stays as it is.
    return new Promise((resolve) => line.push(resolve));
  };

  return {
    async run(knownClient, check) {
      await slot(knownClient);
      try {
        return await check();
      } finally {
        startNext();
      }
    },
  };
}
