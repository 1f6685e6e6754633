import type { Context, Next } from 'koa';
import type { Logger } from 'pino';
import { ApiError, ERROR_CODES, type ErrorCode } from '../shared/errors';
import { requestLogger } from './request-log';

// Errors thrown by Koa's own middleware (http-errors) carry a status and an `expose` flag.
interface HttpLikeError {
  status?: number;
  statusCode?: number;
  expose?: boolean;
  message?: string;
}

/**
 * The database is unreachable or going away (refused or cut connection, server shutting down, pool exhausted
 * waiting for one, or not accepting connections for now: 55000 at connection start, while an operator has set
 * ALLOW_CONNECTIONS false, e.g. to copy it as a backup). Not the request's fault and not a bug: the client should try
 * again, which is safe, because a platform call is one transaction (all or nothing) and idempotent on its natural key.
 */
const DATABASE_UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03']);

export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, name, message, severity } = err as { code?: unknown; name?: unknown; message?: unknown; severity?: unknown };
  if (typeof code === 'string' && (DATABASE_UNAVAILABLE_CODES.has(code) || code.startsWith('08'))) return true;
  if (code === '55000' && severity === 'FATAL') return true;
  if (name === 'KnexTimeoutError') return true;
  return typeof message === 'string' && /Connection terminated|Client has encountered a connection error/.test(message);
}

/** A 4xx from Koa or a library, under the code of our list that has its status. */
function codeForStatus(status: number): ErrorCode {
  const code = (Object.keys(ERROR_CODES) as ErrorCode[]).find((candidate) => ERROR_CODES[candidate].status === status);
  return code ?? 'bad_request';
}

/**
 * What the router left unanswered: no route (404), or a route without this method (405 with the `Allow` header the
 * router set; a method no route knows at all, such as TRACE, is a 405 too rather than the router's 501).
 */
function unanswered(ctx: Context): ApiError | undefined {
  if (ctx.body !== undefined && ctx.body !== null) return undefined;
  if (ctx.status === 404) return new ApiError('not_found', 'Not found');
  if (ctx.status === 405 || ctx.status === 501) {
    return new ApiError('method_not_allowed', `Method ${ctx.method} is not allowed here`, { Allow: ctx.response.get('Allow') });
  }
  return undefined;
}

function answer(ctx: Context, error: ApiError): void {
  ctx.status = error.status;
  ctx.set(error.headers);
  ctx.body = { error: error.message, code: error.code, ...(error.problems ? { problems: error.problems } : {}) };
}

/**
 * First middleware: every failure becomes `{ error, code, problems? }` with the status of its code. Only intended
 * messages reach the client; anything unexpected is logged and answered with a generic 500.
 */
export function errorMiddleware(log: Logger) {
  return async function handleErrors(ctx: Context, next: Next) {
    try {
      await next();
      const error = unanswered(ctx);
      if (error) answer(ctx, error);
    } catch (caught) {
      if (caught instanceof ApiError) return answer(ctx, caught);
      const err = caught as HttpLikeError;
      const status = err.status ?? err.statusCode;
      if (status && status >= 400 && status < 500 && err.expose !== false) {
        return answer(ctx, new ApiError(codeForStatus(status), err.message ?? 'Bad request'));
      }
      if (isDatabaseUnavailable(caught)) {
        requestLogger(ctx, log).warn({ err: caught, method: ctx.method, path: ctx.path }, 'database unavailable');
        return answer(ctx, new ApiError('service_unavailable', 'The database is not reachable; try again shortly', { 'Retry-After': '5' }));
      }
      requestLogger(ctx, log).error({ err: caught, method: ctx.method, path: ctx.path }, 'unhandled error');
      answer(ctx, new ApiError('internal_error', 'Internal server error'));
    }
  };
}
