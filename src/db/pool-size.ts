/**
 * Connections per process unless DATABASE_POOL_SIZE says otherwise. A process with a delivery worker keeps up to 100
 * attempts open, each reading its event and writing its outcome, beside the relay's claims: with 10 connections its
 * attempts queued for one (BENCHMARKS.md, fourth session: p50 / p95 at 50 events/s 62 / 138 ms with 10, 39 / 97 ms
 * with 30).
 */
export const DEFAULT_POOL_SIZES = { withDeliveryWorker: 30, other: 10 } as const;

export type PoolRole = keyof typeof DEFAULT_POOL_SIZES;

export const databasePoolSize = (configured: number | undefined, role: PoolRole): number => configured ?? DEFAULT_POOL_SIZES[role];
