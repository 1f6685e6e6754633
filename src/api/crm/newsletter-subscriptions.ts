import { z } from 'zod';
import { countedPage, paginationParams } from '../../http/pagination';
import { confirmedSignUpsPage, countConfirmedSignUps } from '../../newsletter/newsletter-store';
import { DATE_ORDER_ERROR, dateOrder, dateParam, environmentParam, swissDay } from '../query-params';
import type { VersionFeatures } from '../versions/features';
import { presentNewsletterSubscription } from '../versions/newsletter-presenter';
import { crmOperation } from './crm-operation';

const query = z
  .object({
    environment: environmentParam,
    dateFrom: dateParam('dateFrom', { meaning: 'Only sign-ups confirmed on or after this day, not after dateTo' }).optional(),
    dateTo: dateParam('dateTo', { meaning: 'Only sign-ups confirmed on or before this day' }).optional(),
    ...paginationParams,
  })
  .refine(dateOrder, DATE_ORDER_ERROR);

export const newsletterSubscriptionsOperation = (features: VersionFeatures) =>
  crmOperation(features, {
    path: '/crm/newsletter-subscriptions/',
    summary: 'Confirmed newsletter sign-ups',
    description:
      'Paginated, ordered by confirmation time, then id. Entries are shaped like the webhook object. A sign-up ' +
      "linked to a contact is in that contact's environment; one without a contact is in PRODUCTION.",
    query,
    answer: { description: 'One page of confirmed sign-ups', schema: 'newsletterSubscriptionPage' },
    errors: ['page_not_found'],
    async handle(ctx, query, { db }) {
      const filter = {
        environment: query.environment,
        confirmedFrom: query.dateFrom ? swissDay(query.dateFrom)!.toJSDate() : undefined,
        confirmedBefore: query.dateTo ? swissDay(query.dateTo)!.plus({ days: 1 }).startOf('day').toJSDate() : undefined,
      };
      await countedPage(ctx, query, {
        count: () => countConfirmedSignUps(db, filter),
        rows: (window) => confirmedSignUpsPage(db, { ...filter, ...window }),
        present: (row) => presentNewsletterSubscription(row, features),
      });
    },
  });
