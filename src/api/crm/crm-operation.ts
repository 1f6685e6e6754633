import type { Context } from 'koa';
import type { z } from 'zod';
import { defineOperation, type Operation, type RouteContext } from '../../route-context';
import type { ErrorCode } from '../../shared/errors';
import type { VersionFeatures } from '../versions/features';
import { RESPONSE_SCHEMAS } from '../versions/schemas';

type VersionSchemas = (typeof RESPONSE_SCHEMAS)[VersionFeatures['version']];

/** A CRM endpoint: a staff-only GET, its query validated, answered in the shape its API version documents. */
export function crmOperation<Q>(
  features: VersionFeatures,
  declaration: {
    path: string;
    summary: string;
    description: string;
    query: z.ZodType<Q>;
    answer: { description: string; schema: keyof VersionSchemas };
    errors?: ErrorCode[];
    handle: (ctx: Context, query: Q, deps: RouteContext) => Promise<void>;
  },
): Operation {
  const { answer, handle } = declaration;
  return defineOperation({
    method: 'get',
    path: declaration.path,
    summary: declaration.summary,
    description: declaration.description,
    access: 'staff',
    query: declaration.query,
    responses: { 200: { description: answer.description, schema: RESPONSE_SCHEMAS[features.version][answer.schema] } },
    errors: declaration.errors,
    handle: (ctx, { query }, deps) => handle(ctx, query, deps),
  });
}
