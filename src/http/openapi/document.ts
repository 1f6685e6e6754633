import { OpenAPIRegistry, OpenApiGeneratorV31, type RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode } from '../../shared/errors';
import { BODY_LIMIT } from '../body';
import type { Operation, OperationGroup } from '../operation';

/** What the document holds beyond the operations (the app's webhooks): registered after them, with their tags. */
export interface DocumentAdditions {
  register(registry: OpenAPIRegistry): void;
  tags: Array<{ name: string; description: string }>;
}

/** Koa's `:id` is OpenAPI's `{id}`. */
export const toOpenApiPath = (koaPath: string) => koaPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

const ALL_CODES = Object.keys(ERROR_CODES) as [ErrorCode, ...ErrorCode[]];

export const errorSchema = z
  .strictObject({
    error: z.string().meta({ description: 'Human-readable message', example: 'Contact not found' }),
    code: z.enum(ALL_CODES).meta({ description: 'Stable machine-readable code (see the table in the description)' }),
    problems: z
      .array(
        z.strictObject({
          in: z.enum(['query', 'path', 'body', 'header']),
          name: z.string().meta({ description: 'Parameter name, or the body field’s dotted path' }),
          message: z.string(),
        }),
      )
      .optional()
      .meta({ description: 'With 400 answers to invalid input, and 409 answers about body fields: each problem and where it is (at most ten)' }),
  })
  .meta({ id: 'Error' });

/** The codes an operation answers with, beyond what it declares: those its access rule and its inputs imply. */
function impliedErrors(operation: Operation<unknown>): ErrorCode[] {
  const codes: ErrorCode[] = [];
  if (operation.query || operation.params) codes.push('invalid_parameter');
  if (operation.query) codes.push('missing_parameter');
  if (operation.body) codes.push('invalid_body', 'malformed_json', 'malformed_body', 'forbidden_key', 'request_timeout', 'payload_too_large', 'unsupported_media_type');
  if (operation.method !== 'get') codes.push('cross_origin_request', 'unsupported_media_type');
  if (operation.access === 'staff') codes.push('not_authenticated', 'token_not_valid', 'permission_denied', 'too_many_login_failures', 'too_many_password_checks');
  if (operation.access === 'metrics') codes.push('not_authenticated');
  return codes;
}

function errorResponses(operation: Operation<unknown>): RouteConfig['responses'] {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set([...impliedErrors(operation), ...(operation.errors ?? [])])) {
    const { status } = ERROR_CODES[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const responses: RouteConfig['responses'] = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[status] = {
      description: codes.map((code) => `\`${code}\`: ${ERROR_CODES[code].meaning}`).join('; '),
      content: { 'application/json': { schema: errorSchema } },
    };
  }
  return responses;
}

function successResponses(operation: Operation<unknown>): RouteConfig['responses'] {
  return Object.fromEntries(
    Object.entries(operation.responses).map(([status, response]) => [
      status,
      {
        description: response!.description,
        content: response!.schema ? { [response!.contentType ?? 'application/json']: { schema: response!.schema } } : undefined,
      },
    ]),
  );
}

/**
 * Who may call, as OpenAPI says it. The metrics token is a setting: without one, /metrics is open, so the document
 * offers the token or nothing (`{}`), and the scheme's description says when it is required.
 */
function securityOf(access: Operation<unknown>['access']): RouteConfig['security'] {
  if (access === 'staff') return [{ bearerAuth: [] }, { basicAuth: [] }];
  if (access === 'metrics') return [{ metricsToken: [] }, {}];
  return [];
}

function routeOf(group: OperationGroup<unknown>, operation: Operation<unknown>): RouteConfig {
  const path = toOpenApiPath(group.prefix + operation.path);
  return {
    method: operation.method,
    path,
    operationId: `${operation.method}${path.replace(/[^A-Za-z0-9]+/g, '_')}`,
    summary: operation.summary,
    description: operation.description,
    tags: [group.tag],
    security: securityOf(operation.access),
    request: {
      query: operation.query as z.ZodObject | undefined,
      params: operation.params as z.ZodObject | undefined,
      body: operation.body ? { required: true, content: { 'application/json': { schema: operation.body } } } : undefined,
    },
    responses: { ...successResponses(operation), ...errorResponses(operation) },
  };
}

const errorCodeTable = [
  '| code | status | meaning |',
  '|---|---|---|',
  ...ALL_CODES.map((code) => `| \`${code}\` | ${ERROR_CODES[code].status} | ${ERROR_CODES[code].meaning} |`),
].join('\n');

/**
 * The OpenAPI 3.1 document of every documented operation, generated from the zod schemas that validate them, and of
 * the additions.
 */
export function buildOpenApiDocument<R>(groups: OperationGroup<R>[], additions: DocumentAdditions) {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'Access token from POST /authentication/create',
  });
  registry.registerComponent('securitySchemes', 'basicAuth', { type: 'http', scheme: 'basic' });
  registry.registerComponent('securitySchemes', 'metricsToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'METRICS_TOKEN: required when one is configured; without one, /metrics answers anyone',
  });
  const documented = groups.filter((group) => group.operations.some((operation) => !operation.undocumented));
  for (const group of documented) {
    for (const operation of group.operations) {
      if (!operation.undocumented) registry.registerPath(routeOf(group, operation));
    }
  }
  additions.register(registry);
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'Donation data API, platform write side and webhook administration',
      version: '2.1',
      description:
        'Read-only donation, contact and newsletter data (v1, v2, v2.1) and campaign link configuration; the ' +
        'platform write side; the webhook admin API; under `webhooks`, every event the service sends. Dates are MM-DD-YYYY whole days in Europe/Zurich; v2.1 ' +
        'timestamps are UTC, v1 and v2 Swiss local time. Paths are case-sensitive and spelled exactly as listed ' +
        '(with or without the trailing slash as shown); any other spelling is a 404, except that a GET or HEAD of a ' +
        'read-API path without its trailing slash is redirected (308) to it. Bodies are JSON of at most ' +
        `${BODY_LIMIT}. Every error is a JSON object with \`error\` and \`code\`:\n\n${errorCodeTable}`,
    },
    tags: [...documented.map(({ tag, description }) => ({ name: tag, description })), ...additions.tags],
  });
}
