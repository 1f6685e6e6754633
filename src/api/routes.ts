import Router from '@koa/router';
import type { RouteContext } from './app';
import { mountOperation } from './operation';
import { buildOpenApiDocument } from './openapi/document';
import { documentationRouter } from './openapi/swagger-ui';
import { apiSurface } from './surface';

/**
 * The read API: one router per root (/api/v1, /api/v2, /api/v2.1, and /crm-api mounting v1 again), the token
 * endpoints, and the documentation generated from the same operations. The caller adds allowedMethods (405).
 */
export function createApiRouter(deps: RouteContext): Router {
  const api = new Router();
  const surface = apiSurface();
  for (const group of surface) {
    const router = new Router({ prefix: group.prefix || undefined });
    for (const operation of group.operations) mountOperation(router, operation, deps);
    api.use(router.routes());
  }
  const docs = documentationRouter(buildOpenApiDocument(surface));
  api.use(docs.routes());
  return api;
}
