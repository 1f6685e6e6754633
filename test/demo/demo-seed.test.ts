import { loadConfig } from '../../src/config';
import type { Db } from '../../src/db/knex';
import { seedDemoData } from '../../src/demo/seed';
import { createTestDatabase } from '../support/database';

let db: Db;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
});

afterAll(async () => {
  await db?.destroy();
});

const TABLES = [
  'campaigns',
  'campaign_links',
  'contacts',
  'checkouts',
  'donations',
  'recurring_donations',
  'reconciliations',
  'newsletter_subscriptions',
  'shop_orders',
  'shop_order_items',
  'webhook_events',
];

async function tableCounts(): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of TABLES) counts[table] = Number((await db(table).count('* as n'))[0].n);
  return counts;
}

const now = new Date('2026-03-01T12:00:00Z');
const DAY = 24 * 60 * 60 * 1000;

test('the demo data covers every kind of record, and a second run creates nothing', async () => {
  const config = loadConfig({});
  const first = await seedDemoData(db, config, now);
  expect(first.created).toBeGreaterThan(30);
  const counts = await tableCounts();
  expect(counts).toMatchObject({ campaigns: 4, campaign_links: 2, recurring_donations: 2, shop_orders: 2, newsletter_subscriptions: 5 });
  // No endpoint is configured by the seeder, so no events.
  expect(counts.webhook_events).toBe(0);

  const second = await seedDemoData(db, config, new Date(now.getTime() + DAY));
  expect(second).toEqual({ created: 0, existing: first.created + first.existing });
  expect(await tableCounts()).toEqual(counts);
});

test('single, multi-checkout and recurring donations in both environments, spread over months', async () => {
  const byEnvironment = await db('checkouts').select('environment').count('* as n').groupBy('environment').orderBy('environment');
  expect(byEnvironment).toEqual([
    { environment: 'PRODUCTION', n: expect.any(Number) },
    { environment: 'TEST', n: 2 },
  ]);
  const positionsPerCheckout = (await db('donations').select('checkout_id').count('* as n').groupBy('checkout_id')).map((row) => Number(row.n));
  expect(Math.max(...positionsPerCheckout)).toBe(3);
  expect(await db('donations').distinct('payment_type').pluck('payment_type')).toEqual(
    expect.arrayContaining(['single', 'recurring_init', 'recurring_interval']),
  );
  expect(await db('checkouts').whereNotNull('recurring_donation_id').count('* as n')).toEqual([{ n: 6 }]);
  expect(await db('checkouts').where({ payment_method: 'INV' }).whereNull('invoice_reference').count('* as n')).toEqual([{ n: 0 }]);

  const [{ oldest, newest }] = await db('checkouts').min('created_at as oldest').max('created_at as newest');
  expect(now.getTime() - oldest.getTime()).toBeGreaterThan(150 * DAY);
  expect(now.getTime() - newest.getTime()).toBeLessThan(7 * DAY);
  expect(newest.getTime()).toBeLessThan(now.getTime());
});

test('newsletter sign-ups, some confirmed, and a registered and a guest shop order', async () => {
  expect(await db('newsletter_subscriptions').whereNotNull('confirmed_at').count('* as n')).toEqual([{ n: 4 }]);
  expect((await db('shop_orders').orderBy('id').pluck('contact_id')).map((id) => id === null)).toEqual([false, true]);
  const link = await db('campaign_links').where({ id: 'wasser-fuer-alle' }).first();
  expect(link).toMatchObject({ active: true, recurring_enabled: true, custom_fields: [expect.objectContaining({ name: 'Anlass' }), expect.anything()] });
});
