import type { Db } from '../../src/db/knex';
import { ANNA, insertCheckout, insertContact, LUCA } from '../support/api-fixtures';
import { contactCountsKept, contactCountsRecomputed } from '../support/contact-counts';
import { createTestDatabase } from '../support/database';
import { eventCountsKept, eventCountsRecounted } from '../support/event-counts';
import { insertEndpoint } from '../support/webhook-rows';

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

  await rollBackAfter('016_add_new_donations_to_contact_totals');
  const columns = await db('information_schema.columns').where({ table_name: 'webhook_events' }).whereIn('column_name', ['uuid', 'workflow_id', 'sweep_checked_at']);
  expect(columns).toEqual([]);
  await insertOldStyle(endpointId, 'after-down', false);
  await db.migrate.latest();
});

test('019 gives every transaction id its holder, caps merged answers, unlinks foreign sign-ups, and comes back down', async () => {
  await rollBackAfter('016_add_new_donations_to_contact_totals');
  const many = await insertContact(db, 'PRODUCTION', {
    ...LUCA,
    email: 'many-answers-019@example.ch',
    custom_fields: Object.fromEntries(Array.from({ length: 60 }, (_, index) => [`F${100 + index}`, 'merged'])),
  });
  for (let index = 0; index < 60; index += 1) {
    const createdAt = new Date(Date.parse('2025-01-01T00:00:00Z') + index * 60_000).toISOString();
    await insertCheckout(db, { contactId: many, environment: 'PRODUCTION', createdAt, positions: [{ amountMinor: 100 }], customFields: { [`F${100 + index}`]: `answer ${index}` } });
  }
  const few = await insertContact(db, 'PRODUCTION', { ...LUCA, email: 'few-answers-019@example.ch', custom_fields: { Anlass: 'Geburtstag' } });
  const shared = await insertCheckout(db, { contactId: few, environment: 'PRODUCTION', createdAt: '2025-02-01T00:00:00Z', positions: [{ amountMinor: 100 }] });
  const order = {
    number: 'S019',
    environment: 'PRODUCTION',
    customer: JSON.stringify({ email: 'shop-019@example.ch' }),
    currency: 'CHF',
    total_price_gross_minor: 1000,
    total_vat_minor: 0,
    total_discount_minor: 0,
    transaction_id: shared.transactionId,
    payment_method: 'TWI',
    payment_status: 'completed',
    shipping_method: 'A-Post',
    shipping_cost_minor: 0,
  };
  await db('shop_orders').insert(order);
  const signUp = { language: 'de', contact_id: few, confirmed_at: '2025-02-02T00:00:00Z' };
  const [foreign, own] = await db('newsletter_subscriptions')
    .insert([
      { ...signUp, email: 'someone-else-019@example.org' },
      { ...signUp, email: 'FEW-answers-019@example.ch' },
    ])
    .returning('id');
  const updatedBefore = (await db('contacts').where({ id: few }).first()).updated_at;

  await db.migrate.latest();
  // An id shared before stays with the checkout; the shop order keeps its row and can still be changed.
  expect(await db('transaction_ids').where({ transaction_id: shared.transactionId })).toEqual([{ transaction_id: shared.transactionId, holder: 'payment' }]);
  await db('shop_orders').where({ number: 'S019' }).update({ shipping_method: 'B-Post' });
  const later = await insertCheckout(db, { contactId: few, environment: 'PRODUCTION', createdAt: '2025-03-01T00:00:00Z', positions: [{ amountMinor: 100 }] });
  const laterOrder = { ...order, number: 'S019b', transaction_id: later.transactionId };
  await expect(db('shop_orders').insert(laterOrder)).rejects.toThrow(/transaction_ids_pkey/);
  const capped = (await db('contacts').where({ id: many }).first()).custom_fields;
  expect(Object.keys(capped).sort()).toEqual(Array.from({ length: 50 }, (_, index) => `F${110 + index}`));
  expect(capped.F159).toBe('answer 59');
  expect(await db('contacts').where({ id: few }).first()).toMatchObject({ custom_fields: { Anlass: 'Geburtstag' }, updated_at: updatedBefore });
  // A sign-up is never linked to a contact with another address; another case is the same address.
  expect(await db('newsletter_subscriptions').whereIn('id', [foreign.id, own.id]).orderBy('id').pluck('contact_id')).toEqual([null, few]);

  await rollBackAfter('016_add_new_donations_to_contact_totals');
  expect(await userTables()).not.toContain('transaction_ids');
  await db('shop_orders').insert(laterOrder);
  expect(Object.keys((await db('contacts').where({ id: many }).first()).custom_fields)).toHaveLength(50);
  await db('shop_orders').whereIn('number', ['S019', 'S019b']).del();
  await db.migrate.latest();
});

test('021 gives the events already there the environment of their payload, and the previous release’s new ones too, and comes back down', async () => {
  const [applied] = (await db.migrate.list()) as [Array<{ name: string }>, unknown];
  const before021 = applied[applied.findIndex(({ name }) => name === '021_store_webhook_event_environment') - 1].name;
  await rollBackAfter(before021);
  const endpointId = await insertEndpoint(db, { url: 'https://crm.example.org/hooks' });
  // As the previous release writes an event: no environment column to fill.
  const insertWithout = async (name: string, payload: string) =>
    (
      await db('webhook_events')
        .insert({ endpoint_id: endpointId, event_type: 'donation.completed', payload_version: 'v2.1', source_key: `m021:${name}`, payload })
        .returning('id')
    )[0].id as number;
  const envelope = (environment: unknown) => JSON.stringify({ id: 1, event: 'donation.completed', created_at: '2025-07-15T10:30:00Z', environment, data: {} });
  const ids = {
    stage: await insertWithout('stage', envelope('stage')),
    dropped: await insertWithout('dropped', ''),
    broken: await insertWithout('broken', '{"environment": "prod"'),
    odd: await insertWithout('odd', envelope(5)),
  };

  await db.migrate.latest();
  const environmentOf = async (id: number) => (await db('webhook_events').where({ id }).first('environment')).environment;
  expect(await environmentOf(ids.stage)).toBe('stage');
  for (const id of [ids.dropped, ids.broken, ids.odd]) expect(await environmentOf(id)).toBeNull();
  // The previous release keeps inserting without the column during a deploy: the trigger fills it from the payload.
  expect(await environmentOf(await insertWithout('later', envelope('test')))).toBe('test');
  // What today's code writes stays as written: the trigger never reads the payload of its inserts.
  const [{ id: written }] = await db('webhook_events')
    .insert({
      endpoint_id: endpointId,
      event_type: 'donation.completed',
      payload_version: 'v2.1',
      source_key: 'm021:written',
      payload: envelope('stage'),
      environment: 'prod',
    })
    .returning('id');
  expect(await environmentOf(written)).toBe('prod');

  await rollBackAfter(before021);
  expect(await db('information_schema.columns').where({ table_name: 'webhook_events', column_name: 'environment' })).toEqual([]);
  await insertWithout('after-down', envelope('prod'));
  await db.migrate.latest();
});

test('024 counts the events already there by status, goes on counting, and comes back down', async () => {
  await rollBackAfter('023_store_webhook_event_trace_context');
  const endpointId = await insertEndpoint(db, { url: 'https://crm.example.org/hooks' });
  const insert = async (name: string, status: string) =>
    db('webhook_events').insert({ endpoint_id: endpointId, event_type: 'donation.completed', payload_version: 'v2.1', source_key: `m024:${name}`, payload: '{}', status });
  for (const [name, status] of [['a', 'waiting'], ['b', 'delivered'], ['c', 'delivered'], ['d', 'max_retries_reached']]) await insert(name, status);
  const kept = () => eventCountsKept(db);
  const recounted = () => eventCountsRecounted(db);

  await db.migrate.latest();
  const counted = await kept();
  expect(counted).toEqual(await recounted());
  expect(counted).toMatchObject({ delivered: expect.any(Number), max_retries_reached: expect.any(Number) });
  await insert('e', 'waiting');
  await db('webhook_events').where({ source_key: 'm024:a' }).update({ status: 'failed' });
  expect(await kept()).toEqual({ ...counted, failed: (counted.failed ?? 0) + 1 });
  expect(await kept()).toEqual(await recounted());

  await rollBackAfter('023_store_webhook_event_trace_context');
  expect(await userTables()).not.toContain('webhook_event_counts');
  await insert('after-down', 'waiting');
  await db.migrate.latest();
  expect(await kept()).toEqual(await recounted());
  await db('webhook_events').where('source_key', 'like', 'm024:%').del();
});
