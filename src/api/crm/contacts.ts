import type { Knex } from 'knex';
import { z } from 'zod';
import type { Db } from '../../db/knex';
import type { Environment } from '../../db/models';
import { DONOR_FIELDS } from '../../shared/donor-fields';
import { defineOperation } from '../operation';
import { assertPageExists, offsetOf, pageBody, type PageRequest } from '../pagination';
import { dateParam, environmentParam, paginationParams, swissDay } from '../params';
import type { VersionFeatures } from '../versions/features';
import { type ContactRow, presentContact } from '../versions/contacts';
import { RESPONSE_SCHEMAS } from '../versions/schemas';

const query = z.object({
  environment: environmentParam,
  updatedSince: dateParam('updatedSince')
    .optional()
    .meta({ description: 'Only contacts changed on or after this day (MM-DD-YYYY, Europe/Zurich)' }),
  ...paginationParams,
});

function contactsFilter(db: Db, environment: Environment, updatedSince: string | undefined): Knex.QueryBuilder {
  const builder = db('contacts as ct').where('ct.environment', environment);
  if (updatedSince) builder.where('ct.updated_at', '>=', swissDay(updatedSince)!.toJSDate());
  return builder;
}

/**
 * One page of contacts with their statistics, aggregated by Postgres in the same query: a lateral subquery per
 * contact sums per currency, then folds the currencies. The unit decides what one donation is. The page is cut
 * before the statistics are joined: with OFFSET on the joined query, Postgres aggregated the donations of every
 * skipped contact as well (the last of 500 pages took over a second; BENCHMARKS.md).
 */
function contactsPage(
  db: Db,
  filter: Knex.QueryBuilder,
  unit: VersionFeatures['contactDonationUnit'],
  page: PageRequest,
): Promise<ContactRow[]> {
  const donationCount = unit === 'checkout' ? 'count(DISTINCT d.checkout_id)' : 'count(*)';
  const pageOfContacts = filter.clone().select('ct.*').orderBy('ct.id').limit(page.page_size).offset(offsetOf(page));
  return db
    .from(pageOfContacts.as('ct'))
    .select(
      'ct.id',
      ...DONOR_FIELDS.map((field) => `ct.${field}`),
      'ct.custom_fields',
      'ct.created_at',
      'stats.donation_count',
      'stats.first_donation_at',
      'stats.last_donation_at',
      'stats.totals',
    )
    .joinRaw(
      `LEFT JOIN LATERAL (
         SELECT sum(per_currency.donation_count) AS donation_count,
                min(per_currency.first_at) AS first_donation_at,
                max(per_currency.last_at) AS last_donation_at,
                json_agg(json_build_object('currency', per_currency.currency, 'amount_minor', per_currency.amount_minor)
                         ORDER BY per_currency.currency) AS totals
         FROM (
           SELECT c.currency, ${donationCount} AS donation_count, sum(d.amount_minor) AS amount_minor,
                  min(d.created_at) AS first_at, max(d.created_at) AS last_at
           FROM donations d JOIN checkouts c ON c.id = d.checkout_id
           WHERE d.contact_id = ct.id AND d.environment = ct.environment
           GROUP BY c.currency
         ) per_currency
       ) stats ON true`,
    )
    .orderBy('ct.id');
}

export const contactsOperation = (features: VersionFeatures) =>
  defineOperation({
    method: 'get',
    path: '/crm/contacts/',
    summary: 'Contacts with donation statistics',
    description:
      'Paginated, ordered by id. Before v2.1 every position counts as one donation; from v2.1 a multi-checkout counts once.',
    auth: 'staff',
    query,
    response: { description: 'One page of contacts', schema: RESPONSE_SCHEMAS[features.version].contactPage },
    errors: { 404: 'Page past the end' },
    async handle(ctx, { query }, { db }) {
      const filter = contactsFilter(db, query.environment, query.updatedSince);
      const [{ count }] = await filter.clone().count({ count: '*' });
      assertPageExists(query, Number(count));
      const rows = await contactsPage(db, filter, features.contactDonationUnit, query);
      ctx.body = pageBody(
        ctx,
        query,
        Number(count),
        rows.map((row) => presentContact(row, features)),
      );
    },
  });
