import type { Context } from 'koa';
import { notFound } from '../shared/errors';
import { INTEGER_ID_MAX, positiveIntegerParam } from './integer-params';
import { requestUrl } from './request-origin';

const MAX_PAGE_SIZE = 1000;
const DEFAULT_PAGE_SIZE = 100;

/** An optional page parameter under the one integer rule of paths and queries. */
const pageParam = (name: string, max: number, fallback: number) =>
  positiveIntegerParam(name, max)
    .optional()
    .transform((value) => value ?? fallback);

/** `page` and `page_size` of every paginated list, for its query schema. */
export const paginationParams = {
  page: pageParam('page', INTEGER_ID_MAX, 1).meta({ description: `Page number, 1 (default) to ${INTEGER_ID_MAX}; a page after the last is a 404`, default: 1 }),
  page_size: pageParam('page_size', MAX_PAGE_SIZE, DEFAULT_PAGE_SIZE).meta({
    description: `Results per page, 1 to ${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE}`,
    default: DEFAULT_PAGE_SIZE,
  }),
};

export interface PageRequest {
  page: number;
  page_size: number;
}

export const offsetOf = ({ page, page_size }: PageRequest): number => (page - 1) * page_size;

/** Page 1 always exists (possibly empty); any later page must start within the results. */
export function assertPageExists(request: PageRequest, count: number): void {
  if (request.page > 1 && offsetOf(request) >= count) throw notFound('Page not found', 'page_not_found');
}

/** `{count, next, previous, results}` with absolute links that keep every other query parameter. */
export function pageBody<T>(ctx: Context, request: PageRequest, count: number, results: T[]) {
  const href = requestUrl(ctx).toString();
  const linkTo = (page: number) => {
    const url = new URL(href);
    url.searchParams.set('page', String(page));
    return url.toString();
  };
  return {
    count,
    next: offsetOf(request) + request.page_size < count ? linkTo(request.page + 1) : null,
    previous: request.page > 1 ? linkTo(request.page - 1) : null,
    results,
  };
}

/**
 * Answers one page of a counted list: the count first, a page past the end is a 404, then only that page's rows are
 * read and presented.
 */
export async function countedPage<Row, Entry>(
  ctx: Context,
  request: PageRequest,
  list: { count: () => Promise<number>; rows: (window: { limit: number; offset: number }) => Promise<Row[]>; present: (row: Row) => Entry },
): Promise<void> {
  const count = await list.count();
  assertPageExists(request, count);
  const rows = await list.rows({ limit: request.page_size, offset: offsetOf(request) });
  ctx.body = pageBody(ctx, request, count, rows.map(list.present));
}
