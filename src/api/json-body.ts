import bodyParser from 'koa-bodyparser';
import type { Context, Next } from 'koa';
import type { z } from 'zod';
import { ApiError, badRequest } from './errors';

/**
 * Parses a JSON request body (up to 1 MB). A body of any other type is a 415; no body at all parses as `{}` and
 * is then refused by the route's schema with a 400 naming the missing fields.
 */
export function jsonBody() {
  const parse = bodyParser({ enableTypes: ['json'], jsonLimit: '1mb', strict: true });
  return async function parseJsonBody(ctx: Context, next: Next) {
    // `is` answers null without a body; an empty body (Content-Length: 0) counts as none too.
    if (ctx.request.length !== 0 && ctx.is('application/json', '+json') === false) {
      throw new ApiError(415, 'unsupported_media_type', 'Content-Type must be application/json');
    }
    await parse(ctx, next);
  };
}

/** Enough to fix a request; a body built to have a problem per element must not get a megabyte of answer. */
const MAX_REPORTED_PROBLEMS = 10;

/** The body validated against a schema; a 400 listing the problems (the first ten) with the path of each field. */
export function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.output<S> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const { issues } = result.error;
  const problems = issues
    .slice(0, MAX_REPORTED_PROBLEMS)
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message));
  if (issues.length > MAX_REPORTED_PROBLEMS) problems.push(`and ${issues.length - MAX_REPORTED_PROBLEMS} more problems`);
  throw badRequest(problems.join('; '), 'invalid_body');
}
