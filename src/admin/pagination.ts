import type { Context } from 'koa';
import { badRequest, notFound } from '../api/errors';

const DEFAULT_PAGE_SIZE = 100;
const MAX_PAGE_SIZE = 1000;

export interface Page {
  page: number;
  pageSize: number;
}

function positiveInteger(ctx: Context, name: string, fallback: number, max: number): number {
  const raw = ctx.query[name];
  if (raw === undefined) return fallback;
  const value = typeof raw === 'string' && /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= 1 && value <= max)) throw badRequest(`${name}: must be an integer from 1 to ${max}`);
  return value;
}

/** `?page=1&page_size=100` (at most 1000). */
export function pageOf(ctx: Context): Page {
  return {
    page: positiveInteger(ctx, 'page', 1, 1_000_000),
    pageSize: positiveInteger(ctx, 'page_size', DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE),
  };
}

/** The absolute URL of the request; a Host header that makes no URL falls back to localhost rather than failing. */
function requestUrl(ctx: Context): URL {
  try {
    return new URL(ctx.href);
  } catch {
    return new URL(`http://localhost${ctx.path}?${ctx.querystring}`);
  }
}

/** `{count, next, previous, results}` with absolute links; a page past the end (other than the first) is a 404. */
export function paginated<T>(ctx: Context, { page, pageSize }: Page, count: number, results: T[]) {
  const lastPage = Math.max(1, Math.ceil(count / pageSize));
  if (page > lastPage) throw notFound('Invalid page', 'invalid_page');
  const link = (target: number) => {
    const url = requestUrl(ctx);
    url.searchParams.set('page', String(target));
    return url.toString();
  };
  return {
    count,
    next: page < lastPage ? link(page + 1) : null,
    previous: page > 1 ? link(page - 1) : null,
    results,
  };
}
