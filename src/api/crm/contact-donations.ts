import { z } from 'zod';
import { notFound } from '../../shared/errors';
import { idParam } from '../../http/integer-params';
import { contactExists } from '../../contacts/contact-store';
import { donationRowsOfContact } from '../../donations/payment-store';
import { environmentParam } from '../query-params';
import type { VersionFeatures } from '../versions/features';
import { presentContactDonations } from '../versions/donation-presenter';
import { crmOperation } from './crm-operation';

const query = z.object({ contactId: idParam('contactId', { example: 7 }), environment: environmentParam });

export const contactDonationsOperation = (features: VersionFeatures) =>
  crmOperation(features, {
    path: '/crm/contact/donations/',
    summary: 'All donations of one contact',
    description:
      'Before v2.1 every position is its own entry; from v2.1 a multi-checkout is one entry with the total and its positions.',
    query,
    answer: { description: 'Donations of the contact', schema: 'contactDonationList' },
    errors: ['not_found'],
    async handle(ctx, query, { db }) {
      if (!(await contactExists(db, { id: query.contactId, environment: query.environment }))) throw notFound('Contact not found');
      const rows = await donationRowsOfContact(db, query.environment, query.contactId);
      ctx.body = presentContactDonations(rows, features);
    },
  });
