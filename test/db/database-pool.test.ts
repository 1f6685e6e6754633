import type { Knex } from 'knex';
import { loadConfig } from '../../src/config';
import { createDb, type Db } from '../../src/db/knex';
import { databasePoolSize } from '../../src/db/pool-size';
import { createTestDatabase } from '../support/database';

let url: string;
let setUp: Db;

beforeAll(async () => {
  ({ db: setUp, url } = await createTestDatabase());
});

afterAll(async () => {
  await setUp?.destroy();
});

test('a process with a delivery worker holds more connections at once than the ten its attempts used to queue for', async () => {
  const db = createDb({ connectionString: url, pool: { max: databasePoolSize(loadConfig({ NODE_ENV: 'test' }).database.poolSize, 'withDeliveryWorker') } });
  const open: Knex.Transaction[] = [];
  try {
    // Held at once, as attempts reading and recording hold theirs: the eleventh would wait forever with ten.
    for (let i = 0; i < 12; i++) open.push(await db.transaction());
    const backends = await Promise.all(open.map(async (trx) => (await trx.raw('SELECT pg_backend_pid() AS pid')).rows[0].pid as number));
    expect(new Set(backends).size).toBe(12);
  } finally {
    await Promise.all(open.map((trx) => trx.rollback()));
    await db.destroy();
  }
});

test('DATABASE_POOL_SIZE sets the connections of any role; unset, a role without a worker keeps ten', () => {
  const configured = (value: string) => loadConfig({ NODE_ENV: 'test', DATABASE_POOL_SIZE: value }).database.poolSize;
  expect(databasePoolSize(configured('3'), 'withDeliveryWorker')).toBe(3);
  expect(databasePoolSize(configured(''), 'other')).toBe(10);
  expect(() => configured('0')).toThrow(/DATABASE_POOL_SIZE/);
});
