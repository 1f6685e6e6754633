import { createDb, type Db } from '../../src/db/knex';
import { preparedStatement, runPrepared } from '../../src/db/prepared-statements';
import { createTestDatabase } from '../support/database';

let db: Db;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  await db.raw('CREATE TABLE prepared_probe (id integer PRIMARY KEY, amount integer NOT NULL)');
  await db.raw('INSERT INTO prepared_probe VALUES (1, 42)');
});

afterAll(() => db.destroy());

const READ = preparedStatement('prepared-probe-read', 'SELECT amount FROM prepared_probe WHERE id = $1');

test('a statement prepared before a migration changed what it returns still answers, on the same connection', async () => {
  // One connection, so that the second call meets the statement prepared by the first.
  const one = createDb({ connectionString: db.client.connectionSettings.connectionString, pool: { max: 1 } });
  try {
    expect(await runPrepared(one, READ, [1])).toEqual([{ amount: 42 }]);
    await db.raw('ALTER TABLE prepared_probe ALTER COLUMN amount TYPE bigint');
    expect(await runPrepared(one, READ, [1])).toEqual([{ amount: 42 }]);
    expect(await runPrepared(one, READ, [1])).toEqual([{ amount: 42 }]);
  } finally {
    await one.destroy();
  }
});

test('a name is declared once: two texts under one name would run whichever a connection saw first', () => {
  expect(() => preparedStatement('prepared-probe-read', 'SELECT 1')).toThrow(/declared twice/);
});
