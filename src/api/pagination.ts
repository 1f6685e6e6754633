import { notFound } from './errors';

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
export function pageBody<T>(href: string, request: PageRequest, count: number, results: T[]) {
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
