import { sleep, waitFor } from './wait';

const donor = {
  gender: 'female',
  first_name: 'Anna',
  last_name: 'Drill',
  email: 'anna.drill@example.org',
  street: 'Bahnhofstrasse',
  street_number: '1',
  postal_code: '8001',
  city: 'Zürich',
  country: 'CH',
  language: 'de',
};

/** Where the load goes: an API (a drill cluster's, or the stack's behind Caddy) and a staff login there. */
export interface StaffApi {
  apiUrl: string;
  /** A staff access token from the API. */
  staffToken(): Promise<string>;
}

/** Signs in at the API with a staff user's credentials: its access token. */
export async function staffLogin(apiUrl: string, credentials: { username: string; password: string }): Promise<string> {
  const response = await fetch(`${apiUrl}/authentication/create`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(credentials),
  });
  if (response.status !== 200) throw new Error(`staff login failed: ${response.status}`);
  return ((await response.json()) as { access: string }).access;
}

/** A staff client of the API that logs in again when its token expires. */
export function apiClient(cluster: StaffApi) {
  let token: Promise<string> | undefined;
  return async function request(method: string, path: string, body: unknown): Promise<number> {
    token ??= cluster.staffToken();
    const response = await fetch(`${cluster.apiUrl}${path}`, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${await token}` },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    await response.arrayBuffer();
    if (response.status === 401) token = undefined;
    return response.status;
  };
}

export async function configureEndpoint(cluster: StaffApi, url: string): Promise<void> {
  const status = await apiClient(cluster)('PUT', '/admin/api/webhook-endpoint', { url, active: true });
  if (status !== 200) throw new Error(`configuring the endpoint failed: ${status}`);
}

export interface LoadResult {
  transactionIds: string[];
  /** Calls that ended with a 2xx (after retries). */
  succeeded: number;
  /** Answers (or network errors) of the tries that did not succeed, by status. */
  failedTries: Record<string, number>;
}

/**
 * Records `count` single-donation checkouts through POST /platform/checkouts, `concurrency` at a time, each retried
 * with the same transaction id (the call is idempotent on it) until it succeeds or `deadlineMs` passes.
 * `onProgress` sees the number of calls completed so far.
 */
export async function recordCheckouts(
  cluster: StaffApi,
  {
    count,
    concurrency,
    prefix,
    deadlineMs,
    pauseMs = 0,
    onProgress,
    onFailedTry,
  }: {
    count: number;
    concurrency: number;
    prefix: string;
    deadlineMs: number;
    /** Pause of each lane between calls, to spread the load over time. */
    pauseMs?: number;
    onProgress?: (done: number) => void;
    /** Sees each try that did not succeed, as it happens (by status or error code). */
    onFailedTry?: (outcome: string) => void;
  },
): Promise<LoadResult> {
  const request = apiClient(cluster);
  const transactionIds = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  const failedTries: Record<string, number> = {};
  const deadline = Date.now() + deadlineMs;
  let next = 0;
  let succeeded = 0;
  const lane = async () => {
    while (next < count) {
      const transactionId = transactionIds[next++];
      for (;;) {
        let outcome: string;
        try {
          const status = await request('POST', '/platform/checkouts', {
            environment: 'PRODUCTION',
            currency: 'CHF',
            donor,
            positions: [{ amount: 25 }],
            payment: { transaction_id: transactionId, method: 'TWI' },
          });
          if (status === 200 || status === 201) {
            succeeded += 1;
            onProgress?.(succeeded);
            if (pauseMs > 0) await sleep(pauseMs);
            break;
          }
          outcome = String(status);
        } catch (err) {
          outcome = ((err as Error).cause as { code?: string } | undefined)?.code ?? (err as Error).name;
        }
        failedTries[outcome] = (failedTries[outcome] ?? 0) + 1;
        onFailedTry?.(outcome);
        if (Date.now() > deadline) return;
        await sleep(250);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { transactionIds, succeeded, failedTries };
}

/**
 * Checkouts recorded in the background at a steady pace, and the moment a drill's fault lands: once `share` of them
 * are committed and the subscriber has received a delivery, so that the fault meets calls before, during and after
 * it. `committed()` counts the calls completed so far.
 */
export async function loadUnderWay(
  cluster: StaffApi,
  subscriber: { total(): number },
  load: Omit<Parameters<typeof recordCheckouts>[1], 'onProgress'>,
  { share, what, timeoutMs }: { share: number; what: string; timeoutMs: number },
): Promise<{ loading: Promise<LoadResult>; committed: () => number }> {
  let committed = 0;
  const loading = recordCheckouts(cluster, { ...load, onProgress: (done) => (committed = done) });
  await waitFor(what, () => committed >= load.count * share && subscriber.total() > 0, timeoutMs);
  return { loading, committed: () => committed };
}
