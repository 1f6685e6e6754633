import { z } from 'zod';
import { toAmount } from '../../shared/money';
import { notFound } from '../../shared/errors';
import { defineOperation } from '../../route-context';
import { type CampaignLinkWithTitle, findActiveCampaignLink } from '../../campaign-links/campaign-store';
import { campaignLinkConfigSchema } from '../versions/schemas';

// Link ids are short slugs; anything else cannot name a link (and never reaches the database).
const LINK_ID = /^[A-Za-z0-9_-]{1,100}$/;

function presentCampaignLinkConfig(link: CampaignLinkWithTitle) {
  return {
    id: link.id,
    campaign: { id: link.campaign_id, title: link.campaign_title },
    active: link.active,
    currency: link.currency,
    amounts: link.amounts_minor.map(toAmount),
    default_amount: toAmount(link.default_amount_minor),
    minimum_amount: toAmount(link.minimum_amount_minor),
    payment_methods: link.payment_methods,
    purposes: link.purposes,
    recurring: { enabled: link.recurring_enabled, intervals: link.recurring_intervals },
    custom_fields: link.custom_fields.map(({ name, type, label, required }) => ({ name, type, label, required })),
    cover_fees: link.cover_fees,
  };
}

export const campaignLinkConfigOperation = () =>
  defineOperation({
    method: 'get',
    path: '/campaign-links/:id/config/',
    summary: 'Donation configuration of a campaign link',
    description: 'No authentication; readable from any origin (CORS) and cacheable for 60 seconds. The same in every version.',
    access: 'public',
    cors: true,
    params: z.object({ id: z.string().meta({ description: 'Campaign link identifier', example: 'wasser-fuer-alle' }) }),
    cacheControl: 'public, max-age=60',
    responses: { 200: { description: 'The donation configuration', schema: campaignLinkConfigSchema } },
    errors: ['campaign_link_not_found'],
    async handle(ctx, { params }, { db }) {
      const link = LINK_ID.test(params.id) ? await findActiveCampaignLink(db, params.id) : undefined;
      if (!link) throw notFound('Campaign link not found', 'campaign_link_not_found');
      ctx.body = presentCampaignLinkConfig(link);
    },
  });
