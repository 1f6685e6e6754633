import type { Context } from 'koa';
import type { z } from 'zod';
import type { ErrorCode } from '../shared/errors';

/**
 * Who may call an operation. Declared on every operation and enforced on that route itself, so no spelling of a
 * path reaches a handler past its guard.
 * - `public`: anyone.
 * - `staff`: Bearer (access JWT) or HTTP Basic of an active staff account.
 * - `metrics`: `Authorization: Bearer <METRICS_TOKEN>` when a metrics token is configured; anyone otherwise.
 */
export type Access = 'public' | 'staff' | 'metrics';

export interface OperationInput<Q, P, B> {
  query: Q;
  params: P;
  body: B;
}

/** One answer the operation gives; JSON unless `contentType` says otherwise. */
export interface SuccessResponse {
  description: string;
  /** The JSON body's schema; responses are validated against it in the tests. */
  schema?: z.ZodType;
  contentType?: string;
}

/**
 * One HTTP operation, described once. The router mounts it (its guard, then its body parser, then validation of
 * every request part with its zod schema, then the handler) and the OpenAPI document is generated from it. `R` is what
 * the app hands every handler beside the request (its route context); the kit never looks into it.
 */
export interface Operation<R, Q = unknown, P = unknown, B = unknown> {
  method: 'get' | 'post' | 'put';
  /**
   * The path exactly as documented, relative to its group's prefix, in Koa syntax (`:id`). Routes match
   * case-sensitively and with the trailing slash as written; any other spelling is a 404 (or, in a group with
   * `slashRedirects`, a redirect for the other trailing slash).
   */
  path: string;
  access: Access;
  summary: string;
  description?: string;
  /** Readable by pages of any origin (`Access-Control-Allow-Origin: *`), with an answer to preflight requests. */
  cors?: boolean;
  /** Cache-Control of a successful answer. Everything else is `no-store`: answers carry personal data or tokens. */
  cacheControl?: string;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
  /** JSON request body; anything other than application/json is a 415. */
  body?: z.ZodType<B>;
  /** The successful answers by status (200, 201, 202, 301 …). */
  responses: Partial<Record<number, SuccessResponse>>;
  /** The error codes this operation answers beyond those its access rule and its inputs imply. */
  errors?: readonly ErrorCode[];
  /** A page, an asset or a redirect rather than an API operation: guarded and mounted alike, not in the document. */
  undocumented?: true;
  handle(ctx: Context, input: OperationInput<Q, P, B>, deps: R): Promise<void>;
}

/**
 * `defineOperation` for an app whose handlers receive `R`: it keeps the input types of one operation while collecting
 * many of them in one list.
 */
export function operationsReceiving<R>() {
  return function defineOperation<Q, P, B>(operation: Operation<R, Q, P, B>): Operation<R> {
    return operation as unknown as Operation<R>;
  };
}

/** Operations that share a path prefix and an OpenAPI tag. */
export interface OperationGroup<R> {
  /** Prepended to each operation's path ('' for none). */
  prefix: string;
  /**
   * A GET or HEAD of one of the group's GET paths with its trailing slash added or removed answers 308 to the path
   * as documented, before any guard: the read API, whose clients come from a platform that redirected so.
   */
  slashRedirects?: true;
  tag: string;
  description: string;
  operations: Operation<R>[];
}
