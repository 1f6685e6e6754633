import { adminApiGroup } from '../admin/operations';
import { adminPageGroup } from '../admin/page-operations';
import { readApiGroups } from '../api/read-api-groups';
import { probesGroup } from '../probes/operations';
import { platformGroup } from '../platform/operations';
import { webhookSchemaGroup } from '../api/webhook-schemas';
import { buildOpenApiDocument } from '../http/openapi/document';
import { documentationGroup } from '../http/openapi/swagger-ui';
import type { OperationGroup } from '../route-context';
import { registerWebhookSchemas, WEBHOOK_TAGS } from '../webhooks/schemas/openapi';

/**
 * Every operation the HTTP service answers: the read API and tokens, the platform write side, the admin API and
 * page, probes and metrics, the webhook payload schemas, and the documentation generated from all of them.
 */
export function httpSurface(): OperationGroup[] {
  const groups = [...readApiGroups(), platformGroup(), adminApiGroup(), probesGroup(), webhookSchemaGroup(), adminPageGroup()];
  return [...groups, documentationGroup(buildOpenApiDocument(groups, { register: registerWebhookSchemas, tags: WEBHOOK_TAGS }))];
}
