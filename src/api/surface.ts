import { tokenOperations } from './auth/token-routes';
import { campaignLinkConfigOperation } from './campaign-links/config';
import { contactDonationsOperation } from './crm/contact-donations';
import { contactsOperation } from './crm/contacts';
import { donationsOperation } from './crm/donations';
import { newsletterSubscriptionsOperation } from './crm/newsletter-subscriptions';
import type { Operation } from './operation';
import { API_ROOTS, VERSION_FEATURES, type VersionFeatures } from './versions/features';

export interface OperationGroup {
  /** Path root the operations are mounted under ('' for the token endpoints). */
  prefix: string;
  /** OpenAPI tag of the group. */
  tag: string;
  description: string;
  operations: Operation[];
}

/** The same paths and parameters under every root; only the version's feature set differs. */
const versionOperations = (features: VersionFeatures): Operation[] => [
  donationsOperation(features),
  contactDonationsOperation(features),
  contactsOperation(features),
  newsletterSubscriptionsOperation(features),
  campaignLinkConfigOperation(),
];

/** Every operation of the HTTP API: what the routers mount and what the OpenAPI document describes. */
export function apiSurface(): OperationGroup[] {
  return [
    ...API_ROOTS.map((root) => ({
      prefix: root.prefix,
      tag: root.prefix.slice(1),
      description: root.aliasOf
        ? `Alias of ${root.aliasOf}: the same answers under a second root`
        : `API ${root.version}`,
      operations: versionOperations(VERSION_FEATURES[root.version]),
    })),
    {
      prefix: '',
      tag: 'authentication',
      description: 'Tokens for the Bearer authentication of the CRM endpoints',
      operations: tokenOperations(),
    },
  ];
}
