import type { Context, Next } from 'koa';

const ONE_YEAR_SECONDS = 365 * 24 * 60 * 60;

/**
 * Headers every answer carries, errors included:
 * - `X-Content-Type-Options: nosniff`: a browser never reads a JSON answer (which may echo input) as HTML or script;
 * - `Cache-Control: no-store` unless the operation declared its answer cacheable: answers carry personal data and
 *   tokens, which no shared or browser cache may keep;
 * - HSTS when the request reached us over https, which we only know from a trusted proxy (TRUST_PROXY): over plain
 *   http the header would be ignored, and without a trusted proxy `X-Forwarded-Proto` is anyone's claim;
 * - `Connection: close` when the answer leaves before the request's body has arrived (a refusal before the body is
 *   read, a body announced on a GET): kept alive, the connection would wait for the rest, and a body that never comes
 *   would be answered a second time with a 408 that a client could take for its next request's answer.
 */
export async function responseHeaders(ctx: Context, next: Next): Promise<void> {
  ctx.set('X-Content-Type-Options', 'nosniff');
  if (ctx.app.proxy && ctx.protocol === 'https') {
    ctx.set('Strict-Transport-Security', `max-age=${ONE_YEAR_SECONDS}; includeSubDomains`);
  }
  try {
    await next();
  } finally {
    if (!ctx.response.get('Cache-Control') || ctx.status >= 300) ctx.set('Cache-Control', 'no-store');
    if (!ctx.req.complete) ctx.set('Connection', 'close');
  }
}
