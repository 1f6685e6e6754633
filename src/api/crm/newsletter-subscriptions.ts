import type { Knex } from 'knex';
import { z } from 'zod';
import type { Db } from '../../db/knex';
import type { Environment } from '../../shared/environment';
import { UNLINKED_SIGN_UP_ENVIRONMENT } from '../../webhooks/payloads/newsletter';
import { defineOperation } from '../../http/operation';
import { assertPageExists, offsetOf, pageBody, paginationParams } from '../../http/pagination';
import { DATE_ORDER_ERROR, dateOrder, dateParam, environmentParam, swissDay } from '../params';
import type { VersionFeatures } from '../versions/features';
import { type NewsletterSubscriptionRow, presentNewsletterSubscription } from '../versions/newsletter-subscriptions';
import { RESPONSE_SCHEMAS } from '../versions/schemas';

const query = z
  .object({
    environment: environmentParam,
    dateFrom: dateParam('dateFrom')
      .optional()
      .meta({ description: 'Only sign-ups confirmed on or after this day (MM-DD-YYYY, Europe/Zurich)' }),
    dateTo: dateParam('dateTo')
      .optional()
      .meta({ description: 'Only sign-ups confirmed on or before this day (MM-DD-YYYY, Europe/Zurich)' }),
    ...paginationParams,
  })
  .refine(dateOrder, DATE_ORDER_ERROR);

/**
 * Confirmed sign-ups of one environment by the rule of `signUpEnvironment` (the contact's environment, PRODUCTION
 * without a contact), the same that sets their events' envelope environment, so every sign-up is listed exactly once.
 */
function confirmedSubscriptions(
  db: Db,
  environment: Environment,
  dateFrom: string | undefined,
  dateTo: string | undefined,
): Knex.QueryBuilder {
  const builder = db('newsletter_subscriptions as ns')
    .leftJoin('contacts as ct', 'ct.id', 'ns.contact_id')
    .whereNotNull('ns.confirmed_at')
    .whereRaw('coalesce(ct.environment, ?) = ?', [UNLINKED_SIGN_UP_ENVIRONMENT, environment]);
  if (dateFrom) builder.where('ns.confirmed_at', '>=', swissDay(dateFrom)!.toJSDate());
  if (dateTo) builder.where('ns.confirmed_at', '<', swissDay(dateTo)!.plus({ days: 1 }).startOf('day').toJSDate());
  return builder;
}

export const newsletterSubscriptionsOperation = (features: VersionFeatures) =>
  defineOperation({
    method: 'get',
    path: '/crm/newsletter-subscriptions/',
    summary: 'Confirmed newsletter sign-ups',
    description:
      'Paginated, ordered by confirmation time, then id. Entries are shaped like the webhook object. A sign-up ' +
      "linked to a contact is in that contact's environment; one without a contact is in PRODUCTION.",
    access: 'staff',
    query,
    responses: {
      200: { description: 'One page of confirmed sign-ups', schema: RESPONSE_SCHEMAS[features.version].newsletterSubscriptionPage },
    },
    errors: ['page_not_found'],
    async handle(ctx, { query }, { db }) {
      const filter = confirmedSubscriptions(db, query.environment, query.dateFrom, query.dateTo);
      const [{ count }] = await filter.clone().count({ count: '*' });
      assertPageExists(query, Number(count));
      const rows: NewsletterSubscriptionRow[] = await filter
        .clone()
        .select(
          'ns.id',
          'ns.contact_id',
          'ns.gender',
          'ns.first_name',
          'ns.last_name',
          'ns.email',
          'ns.language',
          'ns.confirmed_at',
          'ct.gender as contact_gender',
          'ct.first_name as contact_first_name',
          'ct.last_name as contact_last_name',
          'ct.email as contact_email',
          'ct.language as contact_language',
        )
        .orderBy([{ column: 'ns.confirmed_at' }, { column: 'ns.id' }])
        .limit(query.page_size)
        .offset(offsetOf(query));
      ctx.body = pageBody(
        ctx,
        query,
        Number(count),
        rows.map((row) => presentNewsletterSubscription(row, features)),
      );
    },
  });
