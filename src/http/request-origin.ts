import { isIPv6 } from 'node:net';
import type Koa from 'koa';
import type { Context } from 'koa';

declare module 'koa' {
  interface DefaultContext {
    /** PUBLIC_URL's origin, which every absolute link is built from (setPublicOrigin). */
    publicOrigin?: string;
  }
}

export function setPublicOrigin(app: Koa, origin: string | undefined): void {
  app.context.publicOrigin = origin;
}

const HOST_LABEL = /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/;
const AUTHORITY = /^(\[[^\]]*\]|[^:[\]]*)(?::([1-9][0-9]{0,4}))?$/;

function isHostName(host: string): boolean {
  const name = host.endsWith('.') ? host.slice(0, -1) : host;
  return name.length > 0 && name.length <= 253 && name.split('.').every((label) => HOST_LABEL.test(label));
}

/**
 * `host[:port]` and nothing else: a host name or IPv4 literal, or a bracketed IPv6 literal (no zone), with an
 * optional port 1 … 65535. No userinfo, path, query, fragment or space, which would move a link elsewhere.
 */
export function isValidAuthority(value: string): boolean {
  const match = AUTHORITY.exec(value);
  if (!match) return false;
  const [, host, port] = match;
  if (port !== undefined && Number(port) > 65_535) return false;
  if (host.startsWith('[')) return isIPv6(host.slice(1, -1)) && !host.includes('%');
  return isHostName(host);
}

/** RFC 9112 §3.2.2: an absolute-form target (`GET http://host/path`) names the host itself; Host is then ignored. */
const ABSOLUTE_FORM = /^https?:\/\/([^/?#]*)/i;

/** The host the client addressed: X-Forwarded-Host (first entry) only from a trusted proxy, else Host. */
function addressedHost(ctx: Context): string {
  const forwarded = ctx.app.proxy ? ctx.get('X-Forwarded-Host').split(',')[0].trim() : '';
  return forwarded || ctx.get('Host');
}

/**
 * The `host[:port]` the client addressed: the absolute-form target's, else X-Forwarded-Host from a trusted proxy,
 * else Host; undefined when that is not a valid host[:port].
 */
export function addressedAuthority(ctx: Context): string | undefined {
  const absolute = ABSOLUTE_FORM.exec(ctx.originalUrl);
  const authority = absolute ? absolute[1] : addressedHost(ctx);
  return isValidAuthority(authority) ? authority : undefined;
}

/**
 * The request's absolute URL, for links back to this service: its path and query under the public origin
 * (PUBLIC_URL), never under the Host or X-Forwarded-Host a client sent, which would let a request with
 * `Host: evil.example` hand out links to another site. Without PUBLIC_URL (development): http://localhost and the
 * port the request came in on, the address the start command prints. No fragment.
 */
export function requestUrl(ctx: Context): URL {
  const absolute = ABSOLUTE_FORM.exec(ctx.originalUrl);
  const rest = absolute ? ctx.originalUrl.slice(absolute[0].length) : ctx.originalUrl;
  const path = rest.startsWith('/') ? rest : `/${rest}`;
  const origin = ctx.publicOrigin ?? `http://localhost:${ctx.req.socket.localPort}`;
  // Joined as text: resolved as a reference, a path such as `//evil.example/x` would name another host.
  const url = new URL(`${origin}${path}`);
  url.hash = '';
  return url;
}
