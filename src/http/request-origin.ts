import { isIPv6 } from 'node:net';
import type { Context } from 'koa';

/** Where links fall back to when the request names no usable host (docs/api.md). */
const FALLBACK_ORIGIN = 'http://localhost';

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
 * The request's absolute URL, for links back to this service: the addressed host when it is a valid host[:port],
 * otherwise `http://localhost`; the scheme the connection (or a trusted proxy) says; no fragment.
 */
export function requestUrl(ctx: Context): URL {
  const absolute = ABSOLUTE_FORM.exec(ctx.originalUrl);
  const authority = addressedAuthority(ctx);
  const rest = absolute ? ctx.originalUrl.slice(absolute[0].length) : ctx.originalUrl;
  const path = rest.startsWith('/') ? rest : `/${rest}`;
  const scheme = ctx.protocol === 'https' ? 'https' : 'http';
  let url: URL;
  try {
    url = new URL(authority ? `${scheme}://${authority}${path}` : `${FALLBACK_ORIGIN}${path}`);
  } catch {
    // A name that passes the character rule yet is no URL host (`1.2.3.4.5`, `999.0.0.1`).
    url = new URL(`${FALLBACK_ORIGIN}${path}`);
  }
  url.hash = '';
  return url;
}
