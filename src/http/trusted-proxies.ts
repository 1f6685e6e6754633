import type { Context, Next } from 'koa';
import { forwardedClientAddress, isTrusted, plainAddress, trustedProxyList } from '../shared/trusted-proxy-list';

/** The X-Forwarded-* fields Koa and this service read: believed from a trusted proxy only. */
const FORWARDING_HEADERS = ['x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto'] as const;

/**
 * Decides per request whether its forwarding headers are believed: from a peer in `entries`, the client address is
 * the forwarded one and Koa reads X-Forwarded-Host and -Proto; from any other peer those headers are removed before
 * anything reads them, so that the client address, the links' scheme, HSTS and the same-origin check see the
 * connection as it is.
 */
export function trustForwardingHeadersFrom(entries: readonly string[]) {
  const proxies = trustedProxyList(entries);
  return async function forwardingHeaders(ctx: Context, next: Next): Promise<void> {
    const peer = plainAddress(ctx.req.socket.remoteAddress ?? '');
    if (isTrusted(proxies, peer)) {
      ctx.request.ip = forwardedClientAddress(proxies, peer, ctx.get('X-Forwarded-For') || undefined);
    } else {
      for (const name of FORWARDING_HEADERS) delete ctx.req.headers[name];
      ctx.request.ip = peer;
    }
    await next();
  };
}
