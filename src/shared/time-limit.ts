/**
 * Settles as `work` does, or rejects once `ms` have passed without an answer. A late result of `work` is dropped:
 * what matters to the caller (a probe, a scrape) is an answer in time.
 */
export function withTimeLimit<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, expired]).finally(() => clearTimeout(timer));
}
