import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import type { z } from 'zod';
import type { Operation } from '../operation';
import type { OperationGroup } from '../surface';
import { errorSchema } from '../versions/schemas';

export const OPENAPI_JSON_PATH = '/api/openapi.json';

/** Koa's `:id` is OpenAPI's `{id}`. */
export const toOpenApiPath = (koaPath: string) => koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const errorResponse = (description: string) => ({
  description,
  content: { 'application/json': { schema: errorSchema } },
});

function responsesOf(operation: Operation): RouteConfig['responses'] {
  const responses: RouteConfig['responses'] = {
    200: { description: operation.response.description, content: { 'application/json': { schema: operation.response.schema } } },
  };
  if (operation.query || operation.params || operation.body) {
    responses[400] = errorResponse('Invalid parameters (the message names the parameter)');
  }
  if (operation.auth === 'staff') {
    responses[401] = errorResponse('Missing or invalid credentials');
    responses[403] = errorResponse('Valid account without staff permission');
    responses[429] = errorResponse('Too many failed HTTP Basic logins for this user name or from this address; see Retry-After');
  }
  if (operation.errors?.[401]) responses[401] = errorResponse(operation.errors[401]);
  if (operation.errors?.[404]) responses[404] = errorResponse(operation.errors[404]);
  if (operation.errors?.[429]) responses[429] = errorResponse(operation.errors[429]);
  if (operation.body) {
    responses[413] = errorResponse('Body larger than 16 KiB');
    responses[415] = errorResponse('Content-Type is not application/json');
  }
  return responses;
}

function routeOf(prefix: string, tag: string, operation: Operation): RouteConfig {
  return {
    method: operation.method,
    path: toOpenApiPath(prefix + operation.path),
    operationId: `${operation.method}${toOpenApiPath(prefix + operation.path).replace(/[^A-Za-z0-9]+/g, '_')}`,
    summary: operation.summary,
    description: operation.description,
    tags: [tag],
    security: operation.auth === 'staff' ? [{ bearerAuth: [] }, { basicAuth: [] }] : [],
    request: {
      query: operation.query as z.ZodObject | undefined,
      params: operation.params as z.ZodObject | undefined,
      body: operation.body
        ? { required: true, content: { 'application/json': { schema: operation.body } } }
        : undefined,
    },
    responses: responsesOf(operation),
  };
}

/** The OpenAPI 3.1 document, generated from the zod schemas that also validate requests and shape responses. */
export function buildOpenApiDocument(groups: OperationGroup[]) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'Access token from POST /authentication/create',
  });
  registry.registerComponent('securitySchemes', 'basicAuth', { type: 'http', scheme: 'basic' });
  for (const group of groups) {
    for (const operation of group.operations) registry.registerPath(routeOf(group.prefix, group.tag, operation));
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Donation and contact data API',
      version: '2.1',
      description:
        'Read-only donation, contact and newsletter data (v1, v2, v2.1) and campaign link configuration. ' +
        'Dates are MM-DD-YYYY whole days in Europe/Zurich; v2.1 timestamps are UTC, v1 and v2 Swiss local time. ' +
        'Every error is a JSON object with `error` and `code`.',
    },
    tags: groups.map(({ tag, description }) => ({ name: tag, description })),
  });
}
