import bodyParser from 'koa-bodyparser';
import type { Context, Next } from 'koa';
import { ApiError } from '../shared/errors';
import { refuseNumbersThatLoseDigits } from './exact-numbers';

/** The one body limit of every operation: the largest platform call (a shop order) stays far below it. */
export const BODY_LIMIT = '1mb';

interface BodyReadError {
  type?: string;
  code?: string;
  status?: number;
  /** Set by the JSON parser (co-body) on the text it could not parse. */
  body?: unknown;
}

/**
 * What went wrong reading a body, as the client's mistake it is. Without this a gzip, deflate or br body that does
 * not decompress, or a length that does not match, would be a 500.
 */
function bodyReadError(err: BodyReadError, contentEncoding: string): ApiError | undefined {
  // Not JSON, a JSON scalar, or a `__proto__` key (refused rather than risk polluting an object).
  if (err.status === 400 && typeof err.body === 'string') return new ApiError('malformed_json', 'Malformed JSON body');
  switch (err.type) {
    case 'entity.too.large':
      return new ApiError('payload_too_large', `The body is larger than ${BODY_LIMIT}`);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new ApiError('unsupported_media_type', 'Unsupported Content-Encoding or charset; send UTF-8 JSON, optionally gzip, deflate or br');
    case 'request.size.invalid':
    case 'request.aborted':
      return new ApiError('malformed_body', 'The body ended before its Content-Length');
  }
  // zlib and brotli report a corrupt stream with codes of their own (Z_DATA_ERROR, ERR__ERROR_FORMAT_…), no status.
  if (contentEncoding !== '' && err.status === undefined && typeof err.code === 'string') {
    return new ApiError('malformed_body', 'The body does not decompress as its Content-Encoding says');
  }
  if (err.status === 400) return new ApiError('malformed_body', 'The body cannot be read');
  return undefined;
}

const parse = bodyParser({
  enableTypes: ['json'],
  extendTypes: { json: ['application/json', 'application/*+json'] },
  jsonLimit: BODY_LIMIT,
  strict: true,
  onerror(err: Error & BodyReadError, ctx: Context) {
    throw bodyReadError(err, ctx.get('Content-Encoding')) ?? err;
  },
});

/** 415 unless the request has no body (or an empty one) or a JSON one. */
function refuseUnlessJson(ctx: Context): void {
  // `is` answers null without a body; an empty body (Content-Length: 0) counts as none too.
  if (ctx.request.length !== 0 && ctx.is('application/json', '+json') === false) {
    throw new ApiError('unsupported_media_type', 'Content-Type must be application/json');
  }
}

/**
 * Parses a JSON request body. A body of any other type is a 415; no body at all (or an empty one) parses as `{}`,
 * for the operation's schema to refuse with a 400 naming what is missing.
 */
export async function jsonBody(ctx: Context, next: Next): Promise<void> {
  refuseUnlessJson(ctx);
  await parse(ctx, async () => {
    const raw = (ctx.request as { rawBody?: unknown }).rawBody;
    if (typeof raw === 'string' && raw !== '') refuseNumbersThatLoseDigits(raw);
    await next();
  });
}

/**
 * For a state-changing operation that takes no body: none, or JSON (which is not read), else a 415. A form,
 * `text/plain` or multipart body is what a page of another origin can send without asking the browser first.
 */
export async function noBodyButJson(ctx: Context, next: Next): Promise<void> {
  refuseUnlessJson(ctx);
  await next();
}
