import type Router from '@koa/router';
import bodyParser from 'koa-bodyparser';
import type { Context, Middleware } from 'koa';
import type { z } from 'zod';
import { requireStaff } from '../auth/require-staff';
import type { RouteContext } from './app';
import { ApiError } from './errors';
import { parseInput } from './params';

export interface OperationInput<Q, P, B> {
  query: Q;
  params: P;
  body: B;
}

/**
 * One HTTP operation, described once: the router mounts it (authentication, then validation of every request
 * part with its zod schema, then the handler) and the OpenAPI document is generated from the same object.
 */
export interface Operation<Q = unknown, P = unknown, B = unknown> {
  method: 'get' | 'post';
  /** Koa path syntax (`:id`), relative to the root the operation is mounted under. */
  path: string;
  summary: string;
  description?: string;
  /** `staff`: Bearer or Basic of a staff account; `public`: no authentication. */
  auth: 'staff' | 'public';
  /** Readable by pages of any origin (`Access-Control-Allow-Origin: *`), with an answer to preflight requests. */
  cors?: boolean;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
  /** JSON request body; anything other than application/json is a 415. */
  body?: z.ZodType<B>;
  response: { description: string; schema: z.ZodType };
  /** Documented error statuses beyond those implied by auth and inputs (400, 401, 403, 413, 415). */
  errors?: { 404?: string; 401?: string; 429?: string };
  handle(ctx: Context, input: OperationInput<Q, P, B>, deps: RouteContext): Promise<void>;
}

/** Keeps the input types of one operation while collecting many of them in one list. */
export function defineOperation<Q, P, B>(operation: Operation<Q, P, B>): Operation {
  return operation as unknown as Operation;
}

const parseJsonBody = bodyParser({
  enableTypes: ['json'],
  strict: true,
  jsonLimit: '16kb',
  onerror(err: Error & { status?: number }) {
    // A body that is not JSON (or a JSON scalar) is the client's mistake, whatever the parser's wording.
    if (err.status === 400) throw new ApiError(400, 'malformed_json', 'Malformed JSON body');
    throw err;
  },
});

function requireJson(): Middleware {
  return async function jsonOnly(ctx, next) {
    if (!ctx.is('application/json')) {
      throw new ApiError(415, 'unsupported_media_type', 'Content-Type must be application/json');
    }
    await next();
  };
}

async function allowAnyOrigin(ctx: Context, next: () => Promise<unknown>) {
  ctx.set('Access-Control-Allow-Origin', '*');
  await next();
}

function answerPreflight(methods: string) {
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

export function mountOperation(router: Router, operation: Operation, deps: RouteContext): void {
  // Mounted without the documented trailing slash: the (non-strict) router then answers with and without it.
  const path = operation.path.replace(/(.)\/$/, '$1');
  const middleware: Middleware[] = [];
  if (operation.cors) {
    middleware.push(allowAnyOrigin);
    router.options(path, answerPreflight(`${operation.method.toUpperCase()}, OPTIONS`));
  }
  if (operation.auth === 'staff') middleware.push(requireStaff(deps.db, deps.tokens, deps.loginThrottle));
  if (operation.body) middleware.push(requireJson(), parseJsonBody);
  router[operation.method](path, ...middleware, async function handleOperation(ctx: Context) {
    const input: OperationInput<unknown, unknown, unknown> = {
      query: operation.query ? parseInput(operation.query, ctx.query) : {},
      params: operation.params ? parseInput(operation.params, (ctx as Context & { params: unknown }).params) : {},
      body: operation.body ? parseInput(operation.body, ctx.request.body) : undefined,
    };
    await operation.handle(ctx, input, deps);
  });
}
