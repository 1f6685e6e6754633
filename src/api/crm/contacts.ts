import { z } from 'zod';
import { countedPage, paginationParams } from '../../http/pagination';
import { contactsPage, countContacts } from '../../contacts/contact-store';
import { dateParam, environmentParam, swissDay } from '../query-params';
import type { VersionFeatures } from '../versions/features';
import { presentContact } from '../versions/contact-presenter';
import { crmOperation } from './crm-operation';

const query = z.object({
  environment: environmentParam,
  updatedSince: dateParam('updatedSince', { meaning: 'Only contacts changed on or after this day' }).optional(),
  ...paginationParams,
});

export const contactsOperation = (features: VersionFeatures) =>
  crmOperation(features, {
    path: '/crm/contacts/',
    summary: 'Contacts with donation statistics',
    description:
      'Paginated, ordered by id. Before v2.1 every position counts as one donation; from v2.1 a multi-checkout counts once.',
    query,
    answer: { description: 'One page of contacts', schema: 'contactPage' },
    errors: ['page_not_found'],
    async handle(ctx, query, { db }) {
      const updatedSince = query.updatedSince ? swissDay(query.updatedSince)!.toJSDate() : undefined;
      await countedPage(ctx, query, {
        count: () => countContacts(db, query.environment, updatedSince),
        rows: (window) => contactsPage(db, { environment: query.environment, updatedSince, checkouts: features.checkouts, ...window }),
        present: (row) => presentContact(row, features),
      });
    },
  });
