import type { Db } from '../../src/db/knex';
import { createTestDatabase } from '../support/database';
import { insertEndpoint } from '../support/webhook-rows';

let db: Db;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
});

afterAll(async () => {
  await db?.destroy();
});

/** Rolls back, one at a time, every migration applied after `name`. */
async function rollBackAfter(name: string): Promise<void> {
  for (;;) {
    const [completed] = (await db.migrate.list()) as [Array<{ name: string }>, unknown];
    if (completed.at(-1)?.name === name) return;
    await db.migrate.down();
  }
}

const envelope = (data: unknown) => JSON.stringify({ id: 1, event: 'x', created_at: '2025-07-15T10:30:00Z', environment: 'prod', data });

test('014 gives the events already there their search keys from their payloads, skips payloads that are not JSON, and comes back down', async () => {
  await rollBackAfter('013_add_users_token_version');
  const endpointId = await insertEndpoint(db, { url: 'https://crm.example.org/hooks' });
  const payloads: Record<string, string> = {
    checkout: envelope({
      donation: {
        id: '1000010',
        donor: { email: 'Anna@Example.CH' },
        payment: { transaction_id: 'pi_1' },
        positions: [{ id: '1000010' }, { id: '1000011' }],
      },
    }),
    order: envelope({ shop_order: { id: 'S-1', customer: { email: 'kim@example.org' }, payment: { transaction_id: 'shop-1' } } }),
    signUp: envelope({ newsletter_subscription: { subscription_id: 3, email: 'luca@example.org' } }),
    odd: envelope({ donation: { id: 7, positions: 'none', donor: null } }),
    broken: '{"data": {',
    empty: '',
    array: '[1, 2]',
  };
  const ids: Record<string, number> = {};
  for (const [name, payload] of Object.entries(payloads)) {
    [{ id: ids[name] }] = await db('webhook_events')
      .insert({ endpoint_id: endpointId, event_type: 'donation.completed', payload_version: 'v2.1', source_key: `m014:${name}`, payload })
      .returning('id');
  }

  await db.migrate.latest();
  const row = (name: string) => db('webhook_events').where({ id: ids[name] }).first('transaction_id', 'donor_email', 'test', 'payload_dropped_at');
  const references = async (name: string) =>
    (await db('webhook_event_references').where({ event_id: ids[name] }).orderBy('reference')).map((reference) => reference.reference);
  expect(await row('checkout')).toEqual({ transaction_id: 'pi_1', donor_email: 'anna@example.ch', test: false, payload_dropped_at: null });
  expect(await references('checkout')).toEqual(['1000010', '1000011']);
  expect(await row('order')).toMatchObject({ transaction_id: 'shop-1', donor_email: 'kim@example.org' });
  expect(await references('order')).toEqual(['S-1']);
  expect(await row('signUp')).toMatchObject({ transaction_id: null, donor_email: 'luca@example.org' });
  expect(await references('signUp')).toEqual([]);
  for (const name of ['odd', 'broken', 'empty', 'array']) {
    expect([name, await row(name), await references(name)]).toEqual([name, { transaction_id: null, donor_email: null, test: false, payload_dropped_at: null }, []]);
  }

  await rollBackAfter('013_add_users_token_version');
  expect(await db('information_schema.columns').where({ table_name: 'webhook_events', column_name: 'transaction_id' })).toEqual([]);
  await db.migrate.latest();
});
