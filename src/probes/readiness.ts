import type { Client as TemporalClient } from '@temporalio/client';
import type { Db } from '../db/knex';
import type { Logger } from '../logger';
import { withTimeLimit } from '../shared/time-limit';

export type DependencyState = 'ok' | 'unavailable';

export interface ReadinessDependencies {
  db: Db;
  /** Absent when the process does not use Temporal; it is then not checked. */
  temporalClient?: TemporalClient;
  /** How long each dependency gets to answer. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 2_000;

async function probe(name: string, check: () => Promise<unknown>, timeoutMs: number, log: Logger): Promise<DependencyState> {
  try {
    await withTimeLimit(check(), timeoutMs, name);
    return 'ok';
  } catch (err) {
    log.warn({ err, dependency: name }, 'readiness check failed');
    return 'unavailable';
  }
}

/** Asks Postgres and Temporal, in parallel, for a trivial answer within the time limit. */
export async function checkDependencies(
  { db, temporalClient, timeoutMs = DEFAULT_TIMEOUT_MS }: ReadinessDependencies,
  log: Logger,
): Promise<Record<string, DependencyState>> {
  const checks: Array<[string, () => Promise<unknown>]> = [['postgres', () => db.raw('SELECT 1')]];
  if (temporalClient) {
    const { connection, workflowService } = temporalClient;
    // The deadline also ends the gRPC call and its retries; the time limit above guarantees the answer's timing.
    const askTemporal = () => connection.withDeadline(Date.now() + timeoutMs, () => workflowService.getSystemInfo({}));
    checks.push(['temporal', askTemporal]);
  }
  const states = await Promise.all(checks.map(([name, check]) => probe(name, check, timeoutMs, log)));
  return Object.fromEntries(checks.map(([name], index) => [name, states[index]]));
}
