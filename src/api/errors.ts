import type { Context, Next } from 'koa';
import type { Logger } from '../logger';
import { requestLogger } from './request-log';

/** An error whose message is meant for the client, with a stable machine-readable code. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const badRequest = (message: string, code = 'invalid_parameter') => new ApiError(400, code, message);
export const notFound = (message = 'Not found', code = 'not_found') => new ApiError(404, code, message);

// Errors thrown by Koa's own middleware (body parser, http-errors) carry a status and an `expose` flag.
interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  message?: string;
  type?: string;
}

/**
 * The database is unreachable or going away (refused or cut connection, server shutting down, pool exhausted
 * waiting for one). Not the request's fault and not a bug: the client should try again, which is safe, because a
 * platform call is one transaction (all or nothing) and idempotent on its natural key.
 */
const DATABASE_UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03']);

export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, name, message } = err as { code?: unknown; name?: unknown; message?: unknown };
  if (typeof code === 'string' && (DATABASE_UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  if (name === 'KnexTimeoutError') return true;
  return typeof message === 'string' && /Connection terminated|Client has encountered a connection error/.test(message);
}

const CODES_BY_STATUS: Record<number, string> = {
  400: 'bad_request',
  401: 'not_authenticated',
  403: 'permission_denied',
  404: 'not_found',
  405: 'method_not_allowed',
  409: 'conflict',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'too_many_requests',
};

/**
 * First middleware: every failure becomes `{ error, code }` with the right status. Only intended messages reach
 * the client; anything unexpected is logged and answered with a generic 500.
 */
export function errorMiddleware(log: Logger) {
  return async function handleErrors(ctx: Context, next: Next) {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ApiError(404, 'not_found', 'Not found');
      }
    } catch (caught) {
      if (caught instanceof ApiError) {
        ctx.status = caught.status;
        ctx.set(caught.headers);
        ctx.body = { error: caught.message, code: caught.code };
        return;
      }
      const err = caught as HttpLikeError;
      const status = err.status ?? err.statusCode;
      if (status && status >= 400 && status < 500 && err.expose !== false) {
        ctx.status = status;
        ctx.body = {
          error: status === 400 && err.type === 'entity.parse.failed' ? 'Malformed JSON body' : err.message,
          code: CODES_BY_STATUS[status] ?? 'bad_request',
        };
        return;
      }
      if (isDatabaseUnavailable(caught)) {
        requestLogger(ctx, log).warn({ err: caught, method: ctx.method, path: ctx.path }, 'database unavailable');
        ctx.status = 503;
        ctx.set('Retry-After', '5');
        ctx.body = { error: 'The database is not reachable; try again shortly', code: 'service_unavailable' };
        return;
      }
      requestLogger(ctx, log).error({ err: caught, method: ctx.method, path: ctx.path }, 'unhandled error');
      ctx.status = 500;
      ctx.body = { error: 'Internal server error', code: 'internal_error' };
    }
  };
}
