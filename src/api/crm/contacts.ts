import { z } from 'zod';
import { defineOperation } from '../../http/operation';
import { assertPageExists, offsetOf, pageBody, paginationParams } from '../../http/pagination';
import { contactsPage, countContacts } from '../../platform/contact-store';
import { dateParam, environmentParam, swissDay } from '../params';
import type { VersionFeatures } from '../versions/features';
import { presentContact } from '../versions/contacts';
import { RESPONSE_SCHEMAS } from '../versions/schemas';

const query = z.object({
  environment: environmentParam,
  updatedSince: dateParam('updatedSince')
    .optional()
    .meta({ description: 'Only contacts changed on or after this day (MM-DD-YYYY, Europe/Zurich)' }),
  ...paginationParams,
});

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
      const updatedSince = query.updatedSince ? swissDay(query.updatedSince)!.toJSDate() : undefined;
      const count = await countContacts(db, query.environment, updatedSince);
      assertPageExists(query, count);
      const rows = await contactsPage(db, {
        environment: query.environment,
        updatedSince,
        unit: features.contactDonationUnit,
        limit: query.page_size,
        offset: offsetOf(query),
      });
      ctx.body = pageBody(
        ctx,
        query,
        count,
        rows.map((row) => presentContact(row, features)),
      );
    },
  });
