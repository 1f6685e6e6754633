import type { Db } from '../../src/db/knex';
import { DONOR_FIELDS } from '../../src/shared/donor-fields';

/** The data set of the read API benchmark; everything is in the TEST environment, the API's default. */
export const API_DATA: ApiDataSize & { donations: number; period: { dateFrom: string; dateTo: string; donations: number } } = {
  contacts: 50_000,
  checkouts: 180_000,
  /** Every ninth checkout has two positions: 180,000 checkouts make 200,000 donations. */
  donations: 200_000,
  /** The first 90,000 checkouts (100,000 donations) fall into 2024 (Swiss days), the rest into 2025. */
  period: { dateFrom: '01-01-2024', dateTo: '12-31-2024', donations: 100_000 },
};

/** How many contacts and checkouts to make; the test of the generator makes a small set of the same shape. */
export interface ApiDataSize {
  contacts: number;
  /** Even: the first half falls into 2024, the second into 2025. */
  checkouts: number;
}

/** The donor snapshot a checkout stores: its contact's donor fields (the data set never changes a contact). */
const DONOR_SNAPSHOT = `jsonb_build_object(${DONOR_FIELDS.map((field) => `'${field}', ct.${field}`).join(', ')})`;

/**
 * Fills a fresh, migrated database with generate_series (seconds, not the hours the HTTP write side would take):
 * 50,000 contacts, 20 campaigns, 180,000 checkouts (one in ten in EUR, every ninth with two positions) and their
 * 200,000 donations, two years of them, 100,000 in 2024. Ids start at 1 in a fresh database.
 */
export async function generateApiData(db: Db, { contacts, checkouts }: ApiDataSize = API_DATA): Promise<void> {
  await db.transaction(async (trx) => {
    await trx.raw(`INSERT INTO campaigns (title) SELECT 'Kampagne ' || g FROM generate_series(1, 20) g`);
    await trx.raw(
      `INSERT INTO contacts (environment, gender, first_name, last_name, email, street, street_number, postal_code,
                             city, country, language, newsletter, custom_fields, created_at, updated_at)
       SELECT 'TEST', (ARRAY['female', 'male', 'prefer-not-to-say'])[1 + g % 3], 'Vorname ' || g, 'Nachname ' || g,
              'donor' || g || '@example.org', 'Bahnhofstrasse', (1 + g % 200)::text, (1000 + g % 8999)::text,
              'Zürich', 'CH', (ARRAY['de', 'fr', 'it', 'en'])[1 + g % 4], g % 2 = 0,
              jsonb_build_object('Anlass', 'Geburtstag', 'Spendenquittung', g % 3 = 0),
              timestamptz '2023-06-01 00:00:00+00' + g * interval '1 minute',
              timestamptz '2023-06-01 00:00:00+00' + g * interval '1 minute'
         FROM generate_series(1, ?) g`,
      [contacts],
    );
    await trx.raw(
      `CREATE TEMP TABLE bench_plan ON COMMIT DROP AS
       SELECT i,
              (i * 7919) % ? + 1 AS contact_id,
              CASE WHEN i % 9 = 0 THEN 2 ELSE 1 END AS positions,
              CASE WHEN i % 10 = 0 THEN 'EUR' ELSE 'CHF' END AS currency,
              timestamptz '2024-01-01 00:00:00+01' + (i - 1) * (interval '366 days' / ?) AS created_at
         FROM generate_series(1, ?) i`,
      [contacts, checkouts / 2, checkouts],
    );
    await trx.raw(
      `ALTER TABLE bench_plan ADD COLUMN first_number bigint;
       UPDATE bench_plan p SET first_number = n.first_number
         FROM (SELECT i, 1000000 + sum(positions) OVER (ORDER BY i) - positions + 1 AS first_number FROM bench_plan) n
        WHERE n.i = p.i`,
    );
    // Position p of checkout i: 10 + p CHF plus (i mod 50) francs, so totals vary.
    await trx.raw(
      `INSERT INTO checkouts (id, number, environment, contact_id, currency, total_amount_minor, transaction_id,
                              payment_method, payment_status, custom_fields, donor, created_at)
       SELECT i, first_number::text, 'TEST', contact_id, currency,
              CASE positions WHEN 1 THEN 1100 + (i % 50) * 100 ELSE 2300 + 2 * (i % 50) * 100 END,
              'bench-tx-' || i, (ARRAY['VIS', 'TWI', 'PAYPAL', 'ECA'])[1 + i % 4], 'completed',
              jsonb_build_object('Anlass', 'Geburtstag'), ${DONOR_SNAPSHOT}, p.created_at
         FROM bench_plan p JOIN contacts ct ON ct.id = p.contact_id`,
    );
    await trx.raw(
      `INSERT INTO donations (number, checkout_id, position, environment, contact_id, created_at, amount_minor,
                              campaign_id, purpose, payment_type)
       SELECT (first_number + p - 1)::text, i, p, 'TEST', contact_id, created_at, 1000 + p * 100 + (i % 50) * 100,
              CASE WHEN i % 5 = 0 THEN NULL ELSE 1 + i % 20 END,
              CASE WHEN i % 3 = 0 THEN 'Brunnenbau' END, 'single'
         FROM bench_plan, generate_series(1, positions) p`,
    );
    await trx.raw(`SELECT setval('checkouts_id_seq', (SELECT max(id) FROM checkouts))`);
    await trx.raw(`SELECT setval('donation_number_seq', (SELECT max(number::bigint) FROM donations))`);
  });
  await vacuumUntilAllVisible(db);
}

/**
 * VACUUM ANALYZE until the tables read by the API are all-visible, as autovacuum leaves tables in service: a first
 * VACUUM right after the load can fail to mark pages all-visible while autovacuum's own ANALYZE of the new rows holds
 * an older snapshot, and index-only scans then read the heap after all.
 */
async function vacuumUntilAllVisible(db: Db): Promise<void> {
  for (let round = 0; round < 5; round += 1) {
    await db.raw('VACUUM ANALYZE');
    const { rows } = await db.raw(
      `SELECT bool_and(relallvisible >= relpages) AS visible FROM pg_class
        WHERE relname IN ('contacts', 'contact_donation_totals', 'checkouts', 'donations')`,
    );
    if (rows[0].visible) return;
  }
}
