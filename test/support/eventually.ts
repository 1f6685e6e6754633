/**
 * Waits for a condition that another process brings about (a row written by a worker, a connection made), checking
 * every few milliseconds. It never waits for time to pass: conditions that depend on workflow time are reached by
 * time skipping instead.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  // A function when what to say depends on the state at the time out (output so far, processes still running).
  { timeoutMs = 20_000, what = 'condition' as string | (() => string) } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${typeof what === 'function' ? what() : what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
