import type { Db } from '../src/db/knex';
import { ANNA, insertCheckout, insertContact, LUCA } from './support/api-fixtures';
import { contactCountsKept, contactCountsRecomputed } from './support/contact-counts';
import { createTestDatabase } from './support/database';
import { insertEndpoint } from './support/webhook-rows';

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

/** Rolls back, one at a time, every migration applied after `name`. */
async function rollBackAfter(name: string): Promise<void> {
  for (;;) {
    const [completed] = (await db.migrate.list()) as [Array<{ name: string }>, unknown];
    if (completed.at(-1)?.name === name) return;
    await db.migrate.down();
  }
}

test('009 gives existing checkouts their contact as the donor snapshot, and comes back down', async () => {
  await rollBackAfter('008_notify_webhook_event_inserted');
  expect(await db('information_schema.columns').where({ table_name: 'checkouts', column_name: 'donor' })).toEqual([]);
  const beat = {
    gender: 'male',
    first_name: 'Beat',
    last_name: 'Frei',
    email: 'beat.frei@example.ch',
    company: 'Frei AG',
    street: 'Seeweg',
    street_number: '1a',
    postal_code: '6003',
    city: 'Luzern',
    country: 'CH',
    language: 'de',
    newsletter: true,
  };
  const [contact] = await db('contacts').insert({ environment: 'TEST', ...beat }).returning('id');
  const checkout = {
    number: 'M009',
    environment: 'TEST',
    contact_id: contact.id,
    currency: 'CHF',
    total_amount_minor: 1000,
    transaction_id: 'migration-009',
    payment_method: 'TWI',
    payment_status: 'completed',
  };
  await db('checkouts').insert(checkout);

  await db.migrate.latest();
  expect((await db('checkouts').where({ number: 'M009' }).first()).donor).toEqual({ ...beat, po_box: null });
  // From now on every payment must say who its donor was.
  await expect(db('checkouts').insert({ ...checkout, number: 'M009b', transaction_id: 'migration-009b' })).rejects.toThrow(/donor/);

  await rollBackAfter('008_notify_webhook_event_inserted');
  expect(await db('information_schema.columns').where({ table_name: 'checkouts', column_name: 'donor' })).toEqual([]);
  await db.migrate.latest();
});

test('011 counts the contacts and totals the donations already there, and comes back down', async () => {
  await rollBackAfter('010_create_login_failures');
  const anna = await insertContact(db, 'TEST', ANNA);
  await insertContact(db, 'PRODUCTION', LUCA);
  await insertCheckout(db, {
    contactId: anna,
    environment: 'TEST',
    createdAt: '2025-02-05T10:00:00Z',
    positions: [{ amountMinor: 2000 }, { amountMinor: 3000 }],
  });

  await db.migrate.latest();
  expect(await db('contact_donation_totals').where({ contact_id: anna })).toEqual([
    expect.objectContaining({ currency: 'CHF', position_count: 2, checkout_count: 1, amount_minor: 5000 }),
  ]);
  expect(await contactCountsKept(db)).toEqual(await contactCountsRecomputed(db));

  await rollBackAfter('010_create_login_failures');
  expect(await userTables()).not.toContain('contact_donation_totals');
  await db.migrate.latest();
});

/** An event row as the code before 017 writes it (no key, no workflow id). */
const insertOldStyle = async (endpointId: number, name: string, started: boolean) =>
  (
    await db('webhook_events')
      .insert({
        endpoint_id: endpointId,
        event_type: 'donation.completed',
        payload_version: 'v2.1',
        source_key: `m017:${name}`,
        payload: '{}',
        workflow_started_at: started ? db.fn.now() : null,
      })
      .returning('id')
  )[0].id as number;

test('017 keys every event, keeps the legacy workflow id of events already started, names new ones uniquely, and comes back down', async () => {
  await rollBackAfter('016_add_new_donations_to_contact_totals');
  const endpointId = await insertEndpoint(db, { url: 'https://crm.example.org/hooks' });
  const started = await insertOldStyle(endpointId, 'started', true);
  const queued = await insertOldStyle(endpointId, 'queued', false);

  await db.migrate.latest();
  const rows = await db('webhook_events').whereIn('id', [started, queued]).orderBy('id').select('id', 'uuid', 'workflow_id');
  const [startedRow, queuedRow] = rows;
  expect(startedRow.workflow_id).toBe(`webhook-event-${started}`);
  expect(queuedRow.workflow_id).toBe(`webhook-event-${queued}-${queuedRow.uuid.slice(0, 8)}`);
  expect(startedRow.uuid).not.toBe(queuedRow.uuid);
  expect(startedRow.uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

  // Whatever code inserts a new event (a process of the previous version during a rolling deploy too) gets both.
  const later = await insertOldStyle(endpointId, 'later', false);
  const laterRow = await db('webhook_events').where({ id: later }).first('uuid', 'workflow_id');
  expect(laterRow.workflow_id).toBe(`webhook-event-${later}-${laterRow.uuid.slice(0, 8)}`);

  await db.migrate.down();
  const columns = await db('information_schema.columns').where({ table_name: 'webhook_events' }).whereIn('column_name', ['uuid', 'workflow_id', 'sweep_checked_at']);
  expect(columns).toEqual([]);
  await insertOldStyle(endpointId, 'after-down', false);
  await db.migrate.latest();
});
