/**
 * Waits for a condition that another process brings about (a row written by a worker, a connection made), checking
 * every few milliseconds. It never waits for time to pass: conditions that depend on workflow time are reached by
 * time skipping instead.
 */
interface EventuallyOptions {
  timeoutMs?: number;
  /** What is waited for; a function when what to say depends on the state at the time out (output so far). */
  what?: string | (() => string);
}

export async function eventually<T>(check: () => Promise<T | undefined | false>, { timeoutMs = 20_000, what = 'condition' }: EventuallyOptions = {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
