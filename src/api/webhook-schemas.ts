import { z } from 'zod';
import { webhookSchemaPath, webhookSchemas } from '../webhooks/schemas/catalogue';
import { defineOperation, type Operation, type OperationGroup } from '../route-context';

const SCHEMA_CACHE = 'public, max-age=300';

const schemaIndex = z
  .strictObject({
    results: z.array(
      z.strictObject({
        version: z.string(),
        event: z.string(),
        url: z.string().meta({ description: 'Path of the JSON Schema (draft 2020-12)' }),
      }),
    ),
  })
  .meta({ id: 'WebhookSchemaIndex' });

/**
 * The webhook payloads as JSON Schema files at stable URLs, one per payload version and event type, and their index:
 * public, like the OpenAPI document they also appear in (`webhooks`).
 */
export const webhookSchemaGroup = (): OperationGroup => ({
  prefix: '',
  tag: 'webhook schemas',
  description: 'The payload of every event type in every payload version, as JSON Schema',
  operations: [
    defineOperation({
      method: 'get',
      path: '/api/webhooks/schemas/',
      access: 'public',
      summary: 'Every webhook payload schema, by payload version and event type',
      cacheControl: SCHEMA_CACHE,
      responses: { 200: { description: 'Where each JSON Schema is', schema: schemaIndex } },
      async handle(ctx) {
        ctx.body = { results: webhookSchemas().map(({ version, event }) => ({ version, event, url: webhookSchemaPath(version, event) })) };
      },
    }),
    ...webhookSchemas().map((schema): Operation => {
      const { version, event } = schema;
      const body = JSON.stringify(schema.jsonSchema());
      return defineOperation({
        method: 'get',
        path: webhookSchemaPath(version, event),
        access: 'public',
        summary: `JSON Schema of ${event} (payload ${version})`,
        undocumented: true,
        cacheControl: SCHEMA_CACHE,
        responses: { 200: { description: 'JSON Schema (draft 2020-12)', contentType: 'application/schema+json' } },
        async handle(ctx) {
          ctx.type = 'application/schema+json';
          ctx.body = body;
        },
      });
    }),
  ],
});
