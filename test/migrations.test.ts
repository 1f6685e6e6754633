import type { Db } from '../src/db/knex';
import { createTestDatabase } from './support/database';

let db: Db;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
});

afterAll(async () => {
  await db?.destroy();
});

const userTables = async () =>
  (
    await db('pg_tables')
      .select('tablename')
      .where({ schemaname: 'public' })
      .whereNot('tablename', 'like', 'knex_%')
      .orderBy('tablename')
  ).map((row: { tablename: string }) => row.tablename);

test('migrations go all the way down to an empty schema and up again', async () => {
  const migrated = await userTables();
  expect(migrated).toEqual(
    expect.arrayContaining(['checkouts', 'contacts', 'donations', 'users', 'webhook_delivery_attempts', 'webhook_events']),
  );

  await db.migrate.rollback(undefined, true);
  expect(await userTables()).toEqual([]);

  await db.migrate.latest();
  expect(await userTables()).toEqual(migrated);
});

test('money is stored exactly and bigints come back as numbers', async () => {
  const [campaign] = await db('campaigns').insert({ title: 'Exactness' }).returning('id');
  const [link] = await db('campaign_links')
    .insert({
      id: 'exact',
      campaign_id: campaign.id,
      currency: 'CHF',
      amounts_minor: [1005, 2010],
      default_amount_minor: 1005,
      minimum_amount_minor: 500,
      payment_methods: ['TWI'],
    })
    .returning(['default_amount_minor']);
  expect(link.default_amount_minor).toBe(1005);
});
