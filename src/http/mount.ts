import Router from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { ApiError } from '../shared/errors';
import { jsonBody, noBodyButJson } from './body';
import { parseInput } from './input';
import { sameOriginOnly } from './same-origin';
import type { Access, Operation, OperationGroup, OperationInput } from './operation';

/** The middleware that enforces each access rule (undefined where there is nothing to check): the app's to give. */
export type AccessGuards = Record<Access, Middleware | undefined>;

/** One route the router answers, with the access rule it was declared with. */
export interface MountedRoute {
  method: string;
  path: string;
  access: Access;
  operation: Operation<unknown>;
  /** GET and HEAD of this path with the other trailing slash answer 308 to it (OperationGroup.slashRedirects). */
  redirectsOtherSlash: boolean;
}

type Layer = Router['stack'][number];

/** Which declaration each router layer came from: a layer mounted any other way has none. */
const declarations = new WeakMap<Layer, MountedRoute>();

/** The declaration behind a router layer, or undefined for a layer that was not mounted from an operation. */
export function declarationOf(layer: Layer): MountedRoute | undefined {
  return declarations.get(layer);
}

async function allowAnyOrigin(ctx: Context, next: Next) {
  ctx.set('Access-Control-Allow-Origin', '*');
  await next();
}

function answerPreflight(methods: string): Middleware {
  return async function preflight(ctx: Context) {
    ctx.set({
      'Access-Control-Allow-Origin': '*',
      'Access-Control-Allow-Methods': methods,
      'Access-Control-Allow-Headers': ctx.get('Access-Control-Request-Headers') || 'Content-Type',
      'Access-Control-Max-Age': '600',
    });
    ctx.status = 204;
  };
}

function handler<R>(operation: Operation<R>, deps: R): Middleware {
  return async function handleOperation(ctx: Context) {
    const input: OperationInput<unknown, unknown, unknown> = {
      query: operation.query ? parseInput(operation.query, ctx.query, 'query') : {},
      params: operation.params ? parseInput(operation.params, (ctx as Context & { params: unknown }).params, 'path') : {},
      body: operation.body ? parseInput(operation.body, ctx.request.body, 'body') : undefined,
    };
    await operation.handle(ctx, input, deps);
    if (operation.cacheControl && ctx.status < 300) ctx.set('Cache-Control', operation.cacheControl);
  };
}

/**
 * One router for every operation: paths match exactly as declared (case and trailing slash count), and each route
 * carries its own guard, so no spelling of a path and no prefix middleware decides who gets through. The caller
 * adds `allowedMethods()` for 405 answers with `Allow`.
 */
export function createRouter<R>(groups: OperationGroup<R>[], deps: R, guards: AccessGuards): { router: Router; routes: MountedRoute[] } {
  const router = new Router({ sensitive: true, strict: true });
  const routes: MountedRoute[] = [];
  const declare = (route: MountedRoute) => {
    declarations.set(router.stack[router.stack.length - 1], route);
    routes.push(route);
  };
  for (const group of groups) {
    for (const operation of group.operations) {
      const path = group.prefix + operation.path;
      const guard = guards[operation.access];
      const middleware: Middleware[] = [];
      if (operation.cors) {
        middleware.push(allowAnyOrigin);
        router.options(path, answerPreflight(`${operation.method.toUpperCase()}, OPTIONS`));
        declare({ method: 'OPTIONS', path, access: 'public', operation, redirectsOtherSlash: false });
      }
      // A request that changes something is refused from pages of other origins, before its credentials are looked at.
      const changesState = operation.method !== 'get';
      if (changesState) middleware.push(sameOriginOnly);
      if (guard) middleware.push(guard);
      if (operation.body) middleware.push(jsonBody);
      else if (changesState) middleware.push(noBodyButJson);
      router[operation.method](path, ...middleware, handler(operation, deps));
      const redirectsOtherSlash = group.slashRedirects === true && operation.method === 'get';
      declare({ method: operation.method.toUpperCase(), path, access: operation.access, operation, redirectsOtherSlash });
    }
  }
  return { router, routes };
}

/**
 * Whether a client that follows a redirect to `path` requests exactly `path`: no empty segment (`//` at the start
 * would even name another host), no dot segment in any spelling, nothing a URL parser rewrites.
 */
function requestedAsWritten(path: string): boolean {
  return !path.includes('//') && new URL(path, 'http://localhost').pathname === path;
}

/**
 * Last in line: a request no route matched, whose path differs from a route's only by its trailing slash. A GET or
 * HEAD of a route that redirects (the read API) gets a 308 to the documented path with the query string as sent;
 * anything else, with any method, a 404 that names the documented spelling (a common slip that would otherwise look like a missing
 * resource). The redirect is answered before the route's guard and depends on nothing but the path, which the
 * OpenAPI document publishes anyway: it tells no one whether a resource exists or credentials are right. Its target
 * is a path, never an absolute URL (Host is the client's own), and both the request's path and the target must be
 * ones a client requests as written: `/x//`, dot segments and the like stay 404s, never redirects into a route.
 */
export function suggestDocumentedSpelling(router: Router): Middleware {
  return async function documentedSpelling(ctx: Context, next: Next) {
    await next();
    if (ctx.status !== 404 || ctx.body !== undefined) return;
    const other = ctx.path.endsWith('/') ? ctx.path.slice(0, -1) : `${ctx.path}/`;
    if (other === '') return;
    const routes = router.match(other, ctx.method).path.filter((layer) => layer.methods.length > 0);
    if (routes.length === 0) return;
    const forMethod = routes.filter((layer) => layer.methods.includes(ctx.method));
    const redirects = forMethod.length > 0 && forMethod.every((layer) => declarationOf(layer)?.redirectsOtherSlash);
    if (redirects && (ctx.method === 'GET' || ctx.method === 'HEAD') && requestedAsWritten(ctx.path) && requestedAsWritten(other)) {
      const query = ctx.url.indexOf('?');
      // An empty body: set before the status, or Koa would make the answer a 204.
      ctx.body = null;
      ctx.status = 308;
      ctx.set('Location', query < 0 ? other : other + ctx.url.slice(query));
      return;
    }
    throw new ApiError('not_found', `Not found; the documented path is ${other}`);
  };
}
