import inflate from 'inflation';
import getRawBody from 'raw-body';
import type Koa from 'koa';
import type { Context, Next } from 'koa';
import { ApiError } from '../shared/errors';
import { parseJsonBody, utf8Text } from './json-text';

declare module 'koa' {
  interface Request {
    /** The parsed JSON body of an operation that takes one (src/http/mount.ts validates it). */
    body?: unknown;
  }
  interface DefaultContext {
    /** How long a body may take to arrive once the headers are in (REQUEST_BODY_TIMEOUT_SECONDS). */
    bodyTimeoutMs?: number;
  }
}

/** The one body limit of every operation: the largest platform call (a shop order) stays far below it. */
export const BODY_LIMIT = '1mb';
/** Where an app was given no limit of its own (REQUEST_BODY_TIMEOUT_SECONDS's default). */
const DEFAULT_BODY_TIMEOUT_MS = 30_000;

export function setBodyTimeout(app: Koa, ms: number): void {
  app.context.bodyTimeoutMs = ms;
}

interface BodyReadError {
  type?: string;
  code?: string;
  status?: number;
}

/**
 * What went wrong reading a body, as the client's mistake it is. Without this a gzip, deflate or br body that does
 * not decompress, or a length that does not match, would be a 500.
 */
function bodyReadError(err: BodyReadError, contentEncoding: string): ApiError | undefined {
  switch (err.type) {
    case 'entity.too.large':
      return new ApiError('payload_too_large', `The body is larger than ${BODY_LIMIT}`);
    case 'request.size.invalid':
    case 'request.aborted':
      return new ApiError('malformed_body', 'The body ended before its Content-Length');
  }
  // inflation: a Content-Encoding other than gzip, deflate, br or identity.
  if (err.status === 415) return unsupportedEncoding();
  // zlib and brotli report a corrupt stream with codes of their own (Z_DATA_ERROR, ERR__ERROR_FORMAT_…), no status.
  if (contentEncoding !== '' && err.status === undefined && typeof err.code === 'string') {
    return new ApiError('malformed_body', 'The body does not decompress as its Content-Encoding says');
  }
  if (err.status === 400) return new ApiError('malformed_body', 'The body cannot be read');
  return undefined;
}

const unsupportedEncoding = () =>
  new ApiError('unsupported_media_type', 'Unsupported Content-Encoding or charset; send UTF-8 JSON, optionally gzip, deflate or br');

/** 415 unless the request has no body (or an empty one) or a JSON one. */
function refuseUnlessJson(ctx: Context): void {
  // `is` answers null without a body; an empty body (Content-Length: 0) counts as none too.
  if (ctx.request.length !== 0 && ctx.is('application/json', '+json') === false) {
    throw new ApiError('unsupported_media_type', 'Content-Type must be application/json');
  }
}

/**
 * The body's bytes, decompressed, within the size limit and the time limit. A body that is late is answered with a
 * 408 and its connection closed (the rest of it may still be on the way); what arrives later is no one's.
 */
async function readBytes(ctx: Context): Promise<Buffer> {
  const encoding = ctx.get('Content-Encoding').toLowerCase();
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    const ms = ctx.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
    timer = setTimeout(() => {
      reject(new ApiError('request_timeout', `The body did not arrive within ${ms / 1000} s`, { Connection: 'close' }));
    }, ms);
  });
  try {
    const stream = inflate(ctx.req);
    const reading = getRawBody(stream, {
      // With a Content-Encoding the length is the compressed one; raw-body checks only what it reads.
      length: encoding === '' || encoding === 'identity' ? ctx.request.length : undefined,
      limit: BODY_LIMIT,
    });
    reading.catch(() => undefined); // settled by `late` first: the reader's own end is no longer anyone's concern
    return await Promise.race([reading, late]);
  } catch (err) {
    throw err instanceof ApiError ? err : (bodyReadError(err as BodyReadError, encoding) ?? err);
  } finally {
    clearTimeout(timer);
  }
}

/** `charset` of a JSON body, when one is given, must be UTF-8 (RFC 8259 §8.1: JSON between systems is UTF-8). */
function refuseOtherCharsets(ctx: Context): void {
  const charset = ctx.request.charset.toLowerCase();
  if (charset !== '' && charset !== 'utf-8' && charset !== 'utf8') throw unsupportedEncoding();
}

/**
 * Parses a JSON request body. A body of any other type is a 415; no body at all (or an empty one) parses as `{}`,
 * for the operation's schema to refuse with a 400 naming what is missing. The bytes must be UTF-8 and arrive in time.
 */
export async function jsonBody(ctx: Context, next: Next): Promise<void> {
  refuseUnlessJson(ctx);
  if (ctx.is('application/json', '+json') === null || ctx.request.length === 0) {
    ctx.request.body = {};
  } else {
    refuseOtherCharsets(ctx);
    const text = utf8Text(await readBytes(ctx));
    ctx.request.body = text === '' ? {} : parseJsonBody(text);
  }
  await next();
}

/**
 * For a state-changing operation that takes no body: none, or JSON (which is not read), else a 415. A form,
 * `text/plain` or multipart body is what a page of another origin can send without asking the browser first.
 */
export async function noBodyButJson(ctx: Context, next: Next): Promise<void> {
  refuseUnlessJson(ctx);
  await next();
}
