import type { Db } from '../../src/db/knex';
import { ANNA, CLAIRE, insertCheckout, insertContact, LUCA, MARCO } from '../support/api-fixtures';
import { contactCountsKept, contactCountsRecomputed } from '../support/contact-counts';
import { createTestDatabase } from '../support/database';
import { eventually } from '../support/eventually';

// The statistics Postgres keeps for crm/contacts/ (migration 011) must always equal what the donations and contacts
// say; these tests change the data every way the schema allows and compare with the aggregate computed afresh.
let db: Db;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
});

afterAll(async () => {
  await db?.destroy();
});

const kept = () =>
  db('contact_donation_totals')
    .select('contact_id', 'currency', 'position_count', 'checkout_count', 'amount_minor', 'first_donation_at', 'last_donation_at')
    .orderBy(['contact_id', 'currency']);

const recomputed = async () =>
  (
    await db.raw(`
      SELECT d.contact_id, c.currency, count(*)::int AS position_count, count(DISTINCT d.checkout_id)::int AS checkout_count,
             sum(d.amount_minor)::bigint AS amount_minor, min(d.created_at) AS first_donation_at,
             max(d.created_at) AS last_donation_at
        FROM donations d JOIN checkouts c ON c.id = d.checkout_id
        JOIN contacts ct ON ct.id = d.contact_id AND ct.environment = d.environment
       GROUP BY d.contact_id, c.currency
       ORDER BY d.contact_id, c.currency`)
  ).rows;

const countsKept = () => contactCountsKept(db);
const countsRecomputed = () => contactCountsRecomputed(db);

test('totals follow payments of one and several positions in several currencies, corrections and deletions', async () => {
  const anna = await insertContact(db, 'TEST', ANNA);
  const luca = await insertContact(db, 'TEST', LUCA);
  const base = { environment: 'TEST' as const };
  await insertCheckout(db, { ...base, contactId: anna, createdAt: '2025-01-05T10:00:00Z', positions: [{ amountMinor: 5000 }] });
  const multi = await insertCheckout(db, {
    ...base,
    contactId: anna,
    createdAt: '2025-02-05T10:00:00Z',
    positions: [{ amountMinor: 2000 }, { amountMinor: 3000 }],
  });
  await insertCheckout(db, { ...base, contactId: anna, currency: 'EUR', createdAt: '2025-03-05T10:00:00Z', positions: [{ amountMinor: 700 }] });
  const lucas = await insertCheckout(db, { ...base, contactId: luca, createdAt: '2025-04-05T10:00:00Z', positions: [{ amountMinor: 900 }] });

  expect(await kept()).toEqual(await recomputed());
  expect(await kept()).toContainEqual(
    expect.objectContaining({ contact_id: anna, currency: 'CHF', position_count: 3, checkout_count: 2, amount_minor: 10000 }),
  );

  await db('donations').where({ checkout_id: multi.id, position: 2 }).update({ amount_minor: 3500 });
  expect(await kept()).toEqual(await recomputed());

  await db('checkouts').where({ id: lucas.id }).del(); // its donation goes with it (ON DELETE CASCADE)
  expect(await kept()).toEqual(await recomputed());
  expect(await kept()).not.toContainEqual(expect.objectContaining({ contact_id: luca }));
});

/** Runs `first` in a transaction left open, then `second`, and commits the first once the second waits for its lock. */
async function oneWaitingForTheOther(first: (trx: Db) => Promise<unknown>, second: () => Promise<unknown>, what: string): Promise<void> {
  const open = await db.transaction();
  try {
    await first(open as unknown as Db);
    const waiting = second();
    await eventually(
      async () =>
        (await db('pg_stat_activity').where({ wait_event_type: 'Lock' }).whereRaw('datname = current_database()').first()) !== undefined,
      { what },
    );
    await open.commit();
    await waiting;
  } finally {
    if (!open.isCompleted()) await open.rollback();
  }
}

test('two payments of one contact at the same time are both counted', async () => {
  const claire = await insertContact(db, 'PRODUCTION', CLAIRE);
  const payment = (amountMinor: number, createdAt: string) => ({
    environment: 'PRODUCTION' as const,
    contactId: claire,
    createdAt,
    positions: [{ amountMinor }],
  });
  // The second counts while the first has not committed: it must wait for it, then count both.
  await oneWaitingForTheOther(
    (trx) => insertCheckout(trx, payment(1000, '2025-05-01T08:00:00Z')),
    () => insertCheckout(db, payment(2500, '2025-05-01T08:00:01Z')),
    'the second payment waiting for the first',
  );
  expect(await db('contact_donation_totals').where({ contact_id: claire })).toEqual([
    expect.objectContaining({ currency: 'CHF', position_count: 2, checkout_count: 2, amount_minor: 3500 }),
  ]);
});

test('contacts are counted per environment, and a contact cannot change its environment', async () => {
  const before = await countsKept();
  const marco = await insertContact(db, 'PRODUCTION', MARCO);
  await db('contacts').insert(
    Array.from({ length: 40 }, (_, i) => ({ ...ANNA, environment: i % 3 ? 'TEST' : 'PRODUCTION', email: `bulk${i}@example.ch`, custom_fields: '{}' })),
  );
  expect(await countsKept()).toEqual(await countsRecomputed());
  expect((await countsKept()).PRODUCTION).toBe((before.PRODUCTION ?? 0) + 1 + 14);

  await expect(db('contacts').where({ id: marco }).update({ environment: 'TEST' })).rejects.toThrow(/stays in its environment/);
  await db('contacts').where({ id: marco }).update({ newsletter: false, updated_at: new Date() });
  await db('contacts').where('email', 'like', 'bulk%').del();
  expect(await countsKept()).toEqual(await countsRecomputed());
});

/** A further position of a checkout, added by a statement of its own. */
async function addPosition(
  checkout: { id: number },
  position: number,
  fields: { contactId: number; amountMinor: number; createdAt: string; environment?: 'TEST' | 'PRODUCTION' },
) {
  await db('donations').insert(await positionRow(checkout, position, fields));
}

async function positionRow(
  checkout: { id: number },
  position: number,
  fields: { contactId: number; amountMinor: number; createdAt: string; environment?: 'TEST' | 'PRODUCTION' },
) {
  const { rows } = await db.raw("SELECT nextval('donation_number_seq')::text AS number");
  return {
    number: rows[0].number as string,
    checkout_id: checkout.id,
    position,
    environment: fields.environment ?? 'TEST',
    contact_id: fields.contactId,
    created_at: fields.createdAt,
    amount_minor: fields.amountMinor,
    payment_type: 'single',
  };
}

test('a position added later to a counted checkout adds to the positions and the sum, not to the checkouts', async () => {
  const anna = await insertContact(db, 'TEST', { ...ANNA, email: 'later-position@example.ch' });
  const checkout = await insertCheckout(db, { environment: 'TEST', contactId: anna, createdAt: '2025-06-01T10:00:00Z', positions: [{ amountMinor: 1000 }] });
  await addPosition(checkout, 2, { contactId: anna, amountMinor: 400, createdAt: '2025-05-30T10:00:00Z' });
  await addPosition(checkout, 3, { contactId: anna, amountMinor: 600, createdAt: '2025-06-02T10:00:00Z' });

  expect(await db('contact_donation_totals').where({ contact_id: anna })).toEqual([
    expect.objectContaining({
      currency: 'CHF',
      position_count: 3,
      checkout_count: 1,
      amount_minor: 2000,
      first_donation_at: new Date('2025-05-30T10:00:00Z'),
      last_donation_at: new Date('2025-06-02T10:00:00Z'),
    }),
  ]);
  expect(await kept()).toEqual(await recomputed());
});

test("a checkout whose earlier position is outside its contact's environment counts once the contact's first position arrives", async () => {
  const anna = await insertContact(db, 'TEST', { ...ANNA, email: 'mixed-environments@example.ch' });
  const checkout = await insertCheckout(db, { environment: 'TEST', contactId: anna, createdAt: '2025-06-01T10:00:00Z', positions: [{ amountMinor: 1000 }] });
  await db('donations').where({ checkout_id: checkout.id }).update({ environment: 'PRODUCTION' });
  await addPosition(checkout, 2, { contactId: anna, amountMinor: 400, createdAt: '2025-06-01T10:00:00Z' });

  expect(await db('contact_donation_totals').where({ contact_id: anna })).toEqual([
    expect.objectContaining({ position_count: 1, checkout_count: 1, amount_minor: 400 }),
  ]);
  expect(await kept()).toEqual(await recomputed());
});

test('an upsert of donations that inserts one position and updates another counts the inserted one once', async () => {
  const anna = await insertContact(db, 'TEST', { ...ANNA, email: 'upserted-positions@example.ch' });
  const checkout = await insertCheckout(db, { environment: 'TEST', contactId: anna, createdAt: '2025-06-01T10:00:00Z', positions: [{ amountMinor: 1000 }] });
  const [first] = await db('donations').where({ checkout_id: checkout.id });
  const fields = { contactId: anna, createdAt: '2025-06-01T10:00:00Z' };
  // Its AFTER UPDATE trigger fires before its AFTER INSERT trigger, and recounts with the new position already there.
  await db('donations')
    .insert([{ ...(await positionRow(checkout, 1, { ...fields, amountMinor: 1500 })), number: first.number }, await positionRow(checkout, 2, { ...fields, amountMinor: 200 })])
    .onConflict('number')
    .merge(['amount_minor']);

  expect(await db('contact_donation_totals').where({ contact_id: anna })).toEqual([
    expect.objectContaining({ position_count: 2, checkout_count: 1, amount_minor: 1700 }),
  ]);
  expect(await kept()).toEqual(await recomputed());
});

test("a new donation reads only its own checkout's donations, however many its donor made before", async () => {
  const regular = await insertContact(db, 'TEST', { ...ANNA, email: 'regular-donor@example.ch' });
  for (let month = 1; month <= 60; month++) {
    const createdAt = new Date(Date.UTC(2020, month - 1, 1)).toISOString();
    await insertCheckout(db, { environment: 'TEST', contactId: regular, createdAt, positions: [{ amountMinor: 2000 }] });
  }
  // Rows of `donations` and its indexes read by the insert, the trigger's reads included (Postgres' counters of the
  // transaction under way; they also hold what this connection read before and has not reported yet, hence the difference).
  const readsSoFar = async (trx: Db) =>
    (
      await trx.raw(`SELECT sum(pg_stat_get_xact_tuples_returned(oid) + pg_stat_get_xact_tuples_fetched(oid))::int AS n
                       FROM pg_class WHERE relname = 'donations' OR oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'donations'::regclass)`)
    ).rows[0].n as number;
  const fetched = await db.transaction(async (trx) => {
    const before = await readsSoFar(trx as unknown as Db);
    await insertCheckout(trx as unknown as Db, { environment: 'TEST', contactId: regular, createdAt: '2025-01-01T00:00:00Z', positions: [{ amountMinor: 2000 }] });
    return (await readsSoFar(trx as unknown as Db)) - before;
  });
  // Recounting the donor's totals read 124 (each of the 61 donations by index and from the table).
  expect(fetched).toBeLessThan(10);
  expect(await db('contact_donation_totals').where({ contact_id: regular })).toEqual([
    expect.objectContaining({ position_count: 61, checkout_count: 61, amount_minor: 122000 }),
  ]);
});

test('a correction and a new payment of one contact at the same time, in either order, leave the totals a recount gives', async () => {
  const marco = await insertContact(db, 'PRODUCTION', { ...MARCO, email: 'racing-correction@example.ch' });
  const payment = (amountMinor: number, createdAt: string) => ({ environment: 'PRODUCTION' as const, contactId: marco, createdAt, positions: [{ amountMinor }] });
  const corrected = await insertCheckout(db, payment(1000, '2025-07-01T08:00:00Z'));
  // async: a query builder left unawaited would not run at all.
  const correct = async (trx: Db, amountMinor: number) => trx('donations').where({ checkout_id: corrected.id }).update({ amount_minor: amountMinor });
  const pay = (trx: Db, amountMinor: number, createdAt: string) => insertCheckout(trx, payment(amountMinor, createdAt));
  const steps: Array<[(trx: Db) => Promise<unknown>, () => Promise<unknown>]> = [
    [(trx) => correct(trx, 1500), () => pay(db, 700, '2025-07-02T08:00:00Z')],
    [(trx) => pay(trx, 300, '2025-07-03T08:00:00Z'), () => correct(db, 1800)],
  ];
  for (const [first, second] of steps) {
    await oneWaitingForTheOther(first, second, 'the second change waiting for the first');
    const mine = (rows: Array<{ contact_id: number }>) => rows.filter((row) => row.contact_id === marco);
    expect(mine(await kept())).toEqual(mine(await recomputed()));
  }
  expect(await db('contact_donation_totals').where({ contact_id: marco })).toEqual([
    expect.objectContaining({ position_count: 3, checkout_count: 3, amount_minor: 2800 }),
  ]);
});
