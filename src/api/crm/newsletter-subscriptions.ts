import { z } from 'zod';
import { defineOperation } from '../../http/operation';
import { assertPageExists, offsetOf, pageBody, paginationParams } from '../../http/pagination';
import { confirmedSignUpsPage, countConfirmedSignUps } from '../../platform/newsletter-store';
import { DATE_ORDER_ERROR, dateOrder, dateParam, environmentParam, swissDay } from '../params';
import type { VersionFeatures } from '../versions/features';
import { presentNewsletterSubscription } from '../versions/newsletter-subscriptions';
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
      const filter = {
        environment: query.environment,
        confirmedFrom: query.dateFrom ? swissDay(query.dateFrom)!.toJSDate() : undefined,
        confirmedBefore: query.dateTo ? swissDay(query.dateTo)!.plus({ days: 1 }).startOf('day').toJSDate() : undefined,
      };
      const count = await countConfirmedSignUps(db, filter);
      assertPageExists(query, count);
      const rows = await confirmedSignUpsPage(db, { ...filter, limit: query.page_size, offset: offsetOf(query) });
      ctx.body = pageBody(
        ctx,
        query,
        count,
        rows.map((row) => presentNewsletterSubscription(row, features)),
      );
    },
  });
