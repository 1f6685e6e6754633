import type { Context, Next } from 'koa';
import { ApiError } from '../shared/errors';
import { addressedAuthority } from './request-origin';

/*
 * Cross-site request forgery: a page of another origin can make a browser send a POST to this service (a form, or
 * fetch without CORS), and the browser adds whatever credentials it holds for this origin (HTTP Basic it once
 * prompted for). So every state-changing request that a browser marks as coming from another origin is refused
 * before its guard, whatever its credentials. The rule is the one Go's net/http CrossOriginProtection uses:
 *
 * 1. `Sec-Fetch-Site`, set by the browser itself (no page can set or change it): `same-origin` and `none` (the user
 *    acted, e.g. typed the address) pass; `same-site`, `cross-site` and anything else are refused.
 * 2. Without it (browsers before 2023), `Origin`: it must be a serialized `http(s)://host[:port]` whose host and
 *    port are the ones the request was addressed to (Host, or X-Forwarded-Host from a trusted proxy). `null` (sandboxed
 *    frames, redirects across origins, file pages) is refused. The scheme is not compared: a proxy that ends TLS and
 *    is not declared in TRUST_PROXY hides it, and a page of the same host and port cannot be another party's.
 * 3. Neither header: not a browser (curl, an integration, another server), which has no borrowed credentials.
 */

const crossOriginRefused = () =>
  new ApiError(
    'cross_origin_request',
    'Refused: a state-changing request from a page of another origin; send it from this service’s own pages or from a client that is not a browser',
  );

/** Whether `origin` (an Origin header) names the origin at `authority` (the addressed host[:port]), scheme aside. */
function isSameHost(origin: string, authority: string | undefined): boolean {
  if (authority === undefined) return false;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  // Exactly a serialized origin: no path, userinfo or default port (`http://evil@host`, `http://host:80`, `HTTP://…`).
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== origin) return false;
  try {
    // The addressed authority read with the Origin's scheme, so that its default port and case compare alike.
    return new URL(`${url.protocol}//${authority}`).host === url.host;
  } catch {
    return false;
  }
}

/** What the request's headers say about the page that sent it: true when a browser sent it from another origin. */
export function isCrossOrigin(headers: { secFetchSite: string; origin: string }, authority: string | undefined): boolean {
  if (headers.secFetchSite !== '') return headers.secFetchSite !== 'same-origin' && headers.secFetchSite !== 'none';
  if (headers.origin !== '') return !isSameHost(headers.origin, authority);
  return false;
}

/** Middleware of every state-changing operation, ahead of its guard: 403 `cross_origin_request` (rule above). */
export async function sameOriginOnly(ctx: Context, next: Next): Promise<void> {
  const headers = { secFetchSite: ctx.get('Sec-Fetch-Site'), origin: ctx.get('Origin') };
  if (isCrossOrigin(headers, addressedAuthority(ctx))) throw crossOriginRefused();
  await next();
}
