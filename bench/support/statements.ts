import type { Db } from '../../src/db/knex';

/**
 * What Postgres counted per statement (pg_stat_statements, which the stack loads when asked: startStack's
 * `pgStatStatements`). A statement is one round trip from its client: the service sends no pipelines and, on the
 * delivery path, no multi-statement transactions.
 */

export const resetStatements = (db: Db) => db.raw('SELECT pg_stat_statements_reset()');

export interface StatementCount {
  calls: number;
  /** calls ÷ the events given (absent when none were). */
  perEvent?: number;
  total_ms: number;
  mean_ms: number;
  query: string;
}

/**
 * The `top` statements by total execution time since the last reset, with their calls per event when `events` is
 * given. The benchmark's own sampling of pg_stat_activity is left out: it is not the service's.
 */
export async function readStatements(db: Db, { top = 15, events }: { top?: number; events?: number } = {}): Promise<StatementCount[]> {
  const { rows } = await db.raw(
    `SELECT calls, round(total_exec_time::numeric, 1) AS total_ms, round(mean_exec_time::numeric, 3) AS mean_ms,
            left(regexp_replace(query, '\\s+', ' ', 'g'), 110) AS query
       FROM pg_stat_statements
      WHERE query NOT ILIKE '%pg_stat_activity%' AND query NOT ILIKE '%pg_stat_statements%'
      ORDER BY total_exec_time DESC LIMIT ?`,
    [top],
  );
  return (rows as Array<{ calls: string; total_ms: string; mean_ms: string; query: string }>).map((row) => ({
    calls: Number(row.calls),
    ...(events ? { perEvent: Number(row.calls) / events } : {}),
    total_ms: Number(row.total_ms),
    mean_ms: Number(row.mean_ms),
    query: row.query,
  }));
}

/** A statement as a row of markdownTable. */
export const statementRow = ({ calls, perEvent, total_ms, mean_ms, query }: StatementCount): Record<string, string | number> => ({
  ...(perEvent === undefined ? {} : { 'calls per event': perEvent.toFixed(2) }),
  calls,
  'total ms': total_ms,
  'mean ms': mean_ms,
  query: query.replaceAll('|', '\\|'),
});
