import type { Knex } from 'knex';
import { z } from 'zod';
import type { Db } from '../../db/knex';
import type { Environment } from '../../db/models';
import { DONOR_FIELDS } from '../../shared/donor-fields';
import { defineOperation } from '../../http/operation';
import { assertPageExists, offsetOf, pageBody, type PageRequest, paginationParams } from '../../http/pagination';
import { dateParam, environmentParam, swissDay } from '../params';
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
 * The number of contacts the filter selects. Without a date it is the count Postgres keeps per environment
 * (migration 011): counting every contact for each page was a third of the page's time (BENCHMARKS.md).
 */
async function countContacts(
  db: Db,
  filter: Knex.QueryBuilder,
  environment: Environment,
  updatedSince: string | undefined,
): Promise<number> {
  const [{ count }] = updatedSince
    ? await filter.clone().count({ count: '*' })
    : await db('contact_counts').where({ environment }).sum({ count: 'contacts' });
  return Number(count ?? 0);
}

/**
 * One page of contacts with the statistics Postgres keeps per contact and currency (migration 011), folded over the
 * currencies; the unit decides what one donation is. The page's ids are found first, ordered as the
 * (environment, id) index is, so that OFFSET walks that index alone rather than the contacts.
 */
function contactsPage(
  db: Db,
  filter: Knex.QueryBuilder,
  unit: VersionFeatures['contactDonationUnit'],
  page: PageRequest,
): Promise<ContactRow[]> {
  const donationCount = unit === 'checkout' ? 'sum(t.checkout_count)' : 'sum(t.position_count)';
  const pageIds = filter.clone().select('ct.id').orderBy(['ct.environment', 'ct.id']).limit(page.page_size).offset(offsetOf(page));
  return db
    .from(pageIds.as('page'))
    .join('contacts as ct', 'ct.id', 'page.id')
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
         SELECT ${donationCount} AS donation_count,
                min(t.first_donation_at) AS first_donation_at,
                max(t.last_donation_at) AS last_donation_at,
                json_agg(json_build_object('currency', t.currency, 'amount_minor', t.amount_minor) ORDER BY t.currency)
                  AS totals
         FROM contact_donation_totals t
         WHERE t.contact_id = ct.id
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
    access: 'staff',
    query,
    responses: { 200: { description: 'One page of contacts', schema: RESPONSE_SCHEMAS[features.version].contactPage } },
    errors: ['page_not_found'],
    async handle(ctx, { query }, { db }) {
      const filter = contactsFilter(db, query.environment, query.updatedSince);
      const count = await countContacts(db, filter, query.environment, query.updatedSince);
      assertPageExists(query, count);
      const rows = await contactsPage(db, filter, features.contactDonationUnit, query);
      ctx.body = pageBody(
        ctx,
        query,
        count,
        rows.map((row) => presentContact(row, features)),
      );
    },
  });
