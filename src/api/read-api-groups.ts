import { tokenOperations } from './tokens/token-operations';
import { campaignLinkConfigOperation } from './campaign-links/campaign-link-config';
import { contactDonationsOperation } from './crm/contact-donations';
import { contactsOperation } from './crm/contacts';
import { donationsOperation } from './crm/donations';
import { newsletterSubscriptionsOperation } from './crm/newsletter-subscriptions';
import type { Operation, OperationGroup } from '../route-context';
import { API_ROOTS, VERSION_FEATURES, type VersionFeatures } from './versions/features';

/** The same paths and parameters under every root; only the version's feature set differs. */
const versionOperations = (features: VersionFeatures): Operation[] => [
  donationsOperation(features),
  contactDonationsOperation(features),
  contactsOperation(features),
  newsletterSubscriptionsOperation(features),
  campaignLinkConfigOperation(),
];

/** The read API under each of its roots, and the token endpoints. */
export function readApiGroups(): OperationGroup[] {
  return [
    ...API_ROOTS.map((root) => ({
      prefix: root.prefix,
      tag: root.prefix.slice(1),
      description: root.aliasOf
        ? `Alias of ${root.aliasOf}: the same answers under a second root`
        : `API ${root.version}`,
      operations: versionOperations(VERSION_FEATURES[root.version]),
      slashRedirects: true as const,
    })),
    {
      prefix: '',
      tag: 'authentication',
      description: 'Tokens for the Bearer authentication of the CRM endpoints',
      operations: tokenOperations(),
    },
  ];
}
