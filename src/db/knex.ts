import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { migrationSource } from '../../migrations';

// Amounts are bigint minor units and event ids are bigserial; both stay far below 2^53, so plain numbers are exact.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => Number(value));
// NUMERIC (discount percentages) is returned as a number for the same reason.
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (value: string) => Number(value));

export type Db = Knex;

export interface DbOptions {
  connectionString: string;
  pool?: { min?: number; max?: number };
}

/**
 * Creates the Knex instance: queries are written with Knex in the store that owns their table, except the delivery's
 * hot statements, prepared on its pool's connections (src/db/prepared-statements.ts).
 */
export function createDb({ connectionString, pool }: DbOptions): Db {
  const db = knexFactory({
    client: 'pg',
    connection: { connectionString },
    pool: { min: pool?.min ?? 0, max: pool?.max ?? 10 },
    // A database a newer release migrated further is left as it is, not refused: the previous release's migrate
    // (a rollback, an older process starting) must not fail on names it does not know (docs/deploying.md#migrations-a-one-off-job).
    migrations: { migrationSource, tableName: 'knex_migrations', disableMigrationsListValidation: true },
  });
  return db;
}

export async function migrateToLatest(db: Db): Promise<string[]> {
  const [, applied] = (await db.migrate.latest()) as [number, string[]];
  return applied;
}
