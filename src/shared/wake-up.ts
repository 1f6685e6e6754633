/**
 * A wake-up call between producers of work and one loop that sleeps between rounds: `notify()` says work arrived;
 * `wait()` sleeps, ending early on a notification if asked to (a notification that came before the wait counts
 * too); `stop()` ends the current wait and every later one at once.
 */
export interface WakeUp {
  notify: () => void;
  /** Sleeps `ms`, or less when `early` and work arrives; afterwards nothing counts as pending. */
  wait: (ms: number, options: { early: boolean }) => Promise<void>;
  stop: () => void;
}

export function createWakeUp(): WakeUp {
  let pending = false;
  let stopped = false;
  let current: { end(): void; early: boolean } | undefined;

  return {
    notify: () => {
      pending = true;
      if (current?.early) current.end();
    },
    stop: () => {
      stopped = true;
      current?.end();
    },
    wait: (ms, { early }) =>
      new Promise<void>((resolve) => {
        let timer: NodeJS.Timeout | undefined;
        const end = () => {
          clearTimeout(timer);
          current = undefined;
          pending = false;
          resolve();
        };
        if (stopped || (early && pending)) return end();
        timer = setTimeout(end, ms);
        current = { end, early };
      }),
  };
}
