import { randomBytes } from 'node:crypto';
import { createDb, type Db } from '../../src/db/knex';

const TEMPLATE_DATABASE = 'app_template';

function urlFor(database: string): string {
  const url = new URL(process.env.TEST_DATABASE_URL as string);
  url.pathname = `/${database}`;
  return url.toString();
}

/** A fresh, migrated database of its own for one test file, copied from the template made in global setup. */
export async function createTestDatabase(): Promise<{ db: Db; url: string }> {
  const name = `test_${randomBytes(6).toString('hex')}`;
  const admin = createDb({ connectionString: urlFor('postgres'), pool: { max: 1 } });
  try {
    await admin.raw(`CREATE DATABASE ${name} TEMPLATE ${TEMPLATE_DATABASE}`);
  } finally {
    await admin.destroy();
  }
  const url = urlFor(name);
  const db = createDb({ connectionString: url });
  // A database of its own is an installation of its own (migration 020), not a copy of the template's.
  await db.raw('UPDATE installation SET id = gen_random_uuid()');
  return { db, url };
}

/** Databases a test file makes as it goes (each its own installation), destroyed together in its afterAll. */
export function testDatabases() {
  const made: Db[] = [];
  return {
    create: async (): Promise<Db> => {
      const { db } = await createTestDatabase();
      made.push(db);
      return db;
    },
    destroyAll: () => Promise.all(made.splice(0).map((db) => db.destroy())),
  };
}
