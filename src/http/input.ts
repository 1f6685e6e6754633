import type { z } from 'zod';
import { ApiError, MAX_REPORTED_PROBLEMS, type Problem } from '../shared/errors';

export type InputPart = 'query' | 'path' | 'body';

/** What a request part's problems are called: a missing parameter is told apart from a wrong one. */
function codeOf(part: InputPart, problems: readonly z.core.$ZodIssue[], input: unknown) {
  if (part === 'body') return 'invalid_body';
  const given = (typeof input === 'object' && input !== null ? input : {}) as Record<string, unknown>;
  const missing = problems.every((issue) => issue.path.length > 0 && given[String(issue.path[0])] === undefined);
  return missing ? 'missing_parameter' : 'invalid_parameter';
}

/**
 * A request part parsed by its schema, or a 400 listing its problems (the first ten), each with where it is. Query
 * and path messages name their parameter themselves; a body problem is prefixed with the field's path.
 */
export function parseInput<T extends z.ZodType>(schema: T, value: unknown, part: InputPart): z.output<T> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const { issues } = result.error;
  const problems: Problem[] = issues.slice(0, MAX_REPORTED_PROBLEMS).map((issue) => ({
    in: part,
    name: issue.path.join('.'),
    message: issue.message,
  }));
  const lines = problems.map(({ name, message }) => (part === 'body' && name ? `${name}: ${message}` : message));
  if (issues.length > MAX_REPORTED_PROBLEMS) lines.push(`and ${issues.length - MAX_REPORTED_PROBLEMS} more problems`);
  // Two parameters can fail with the same message ("Both dateFrom and dateTo are required"): said once.
  const message = [...new Set(lines)].join('; ');
  throw new ApiError(codeOf(part, issues, value), message, {}, problems);
}
