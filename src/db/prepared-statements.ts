import type { Knex } from 'knex';
import type pg from 'pg';

/**
 * Statements of the delivery's hot path (one attempt: its event, its start, its outcome), sent with pg as named
 * prepared statements on the connections of the Knex pool. Knex builds, binds and logs a query anew on every call:
 * on the production-like stack that cost the delivery process twice the CPU of pg itself, and Postgres parsed and
 * planned each statement again (BENCHMARKS.md, issue 29). A prepared statement is parsed once per connection, and
 * Postgres keeps its plan. Everything else is written with Knex.
 */
export interface PreparedStatement {
  /** Unique in the process: pg prepares a name once per connection, with the text it first saw. */
  name: string;
  text: string;
}

const names = new Set<string>();

export function preparedStatement(name: string, text: string): PreparedStatement {
  if (names.has(name)) throw new Error(`prepared statement ${name} is declared twice`);
  names.add(name);
  return { name, text };
}

/**
 * Postgres refuses a prepared statement whose result's columns changed type since it was prepared on the connection
 * (a migration while this process runs: `cached plan must not change result type`).
 */
const PLAN_CHANGED = '0A000';

/**
 * Runs `statement` with `values` on a connection of the pool (never inside a transaction), answering its rows. On a
 * connection that prepared it before a migration changed what it returns, it runs unprepared instead, which is correct,
 * only slower, until the pool replaces that connection.
 */
export async function runPrepared<Row extends object>(db: Knex, statement: PreparedStatement, values: unknown[]): Promise<Row[]> {
  const connection: pg.Client = await db.client.acquireConnection();
  try {
    try {
      return (await connection.query<Row>({ name: statement.name, text: statement.text, values })).rows;
    } catch (err) {
      if ((err as { code?: string }).code !== PLAN_CHANGED) throw err;
      return (await connection.query<Row>({ text: statement.text, values })).rows;
    }
  } finally {
    await db.client.releaseConnection(connection);
  }
}
