import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { MAX_ATTEMPTS, RESPONSE_TIMEOUT_MS, RETRY_DELAYS_MS } from '../../delivery-rules/retry-schedule';
import { PAYLOAD_VERSIONS } from '../payload-versions';
import { webhookSchemaPath, webhookSchemas } from './catalogue';

const signatureHeaders = z.object({
  'webhook-id': z.string().optional().meta({ description: 'The envelope `id`, the same on every attempt' }),
  'webhook-timestamp': z.string().optional().meta({ description: 'Seconds since the epoch when this attempt was sent' }),
  'webhook-signature': z.string().optional().meta({
    description:
      'Standard Webhooks signature `v1,<base64 HMAC-SHA256 of id.timestamp.body>`; the three headers are sent when ' +
      'the endpoint has a signing secret (docs/consuming-webhooks.md)',
  }),
});

/** The document's tags of the webhooks, one per payload version. */
export const WEBHOOK_TAGS = PAYLOAD_VERSIONS.map((version) => ({
  name: `Webhooks ${version}`,
  description: `The events an endpoint with payload version ${version} receives (docs/webhooks.md, docs/consuming-webhooks.md)`,
}));

const minutes = (ms: number) => (ms >= 3_600_000 ? `${ms / 3_600_000} h` : `${ms / 60_000} min`);

/**
 * Adds every event type of every payload version to the OpenAPI document's `webhooks`, named `<version>/<event>`
 * (the path of its JSON Schema), with the envelope schema as request body, the signature headers and what counts
 * as delivered.
 */
export function registerWebhookSchemas(registry: OpenAPIRegistry): void {
  const schedule = RETRY_DELAYS_MS.map(minutes).join(', ');
  const timeout = `${RESPONSE_TIMEOUT_MS / 1000} seconds`;
  for (const { version, event, schema } of webhookSchemas()) {
    registry.registerWebhook({
      method: 'post',
      path: `${version}/${event}`,
      operationId: `webhook_${version}_${event}`.replace(/[^A-Za-z0-9]+/g, '_'),
      summary: `${event} (payload version ${version})`,
      description:
        `Sent to the endpoint configured in the admin when its payload version is ${version} and ${event} is ` +
        `selected. JSON Schema: ${webhookSchemaPath(version, event)}. Consumers deduplicate by \`id\`.`,
      tags: [`Webhooks ${version}`],
      request: {
        headers: signatureHeaders,
        body: { required: true, content: { 'application/json': { schema } } },
      },
      responses: {
        '2XX': { description: `Delivered: any 2xx within ${timeout}` },
        default: {
          description:
            `Any other status (redirects are not followed), a connection error or no answer within ${timeout}: ` +
            `failed, retried after ${schedule} (${MAX_ATTEMPTS} attempts in all)`,
        },
      },
    });
  }
}
