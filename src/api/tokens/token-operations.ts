import { z } from 'zod';
import { assertTokenValid, revokeRefreshToken, rotateRefreshToken } from '../../auth/refresh-tokens';
import { issueTokenPair } from '../../auth/tokens';
import { ApiError } from '../../shared/errors';
import type { SuccessResponse } from '../../http/operation';
import { defineOperation, type RouteContext } from '../../route-context';

// Body messages are prefixed with their field's path (`password: is required`).
const requiredString = (max: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
    .min(1, { error: 'must not be empty' })
    .max(max, { error: 'is too long' });

const tokenPair = z
  .strictObject({
    access: z.string().meta({ description: 'Access token (JWT), valid 5 minutes' }),
    refresh: z.string().meta({ description: 'Refresh token (JWT), valid 1 day (never beyond its session), usable once' }),
  })
  .meta({ id: 'TokenPair' });
const empty = z.strictObject({}).meta({ id: 'Empty' });

/**
 * An endpoint that acts on one token given in the body (`token` or `refresh`) and answers what the action returns, or
 * an empty object; a token this service does not accept is a 401 `token_not_valid`.
 */
const tokenOperation = (declaration: {
  path: string;
  summary: string;
  description: string;
  token: 'token' | 'refresh';
  response: SuccessResponse;
  run: (deps: RouteContext, token: string) => Promise<object | void>;
}) =>
  defineOperation({
    method: 'post',
    path: declaration.path,
    summary: declaration.summary,
    description: declaration.description,
    access: 'public',
    body: z.object({ [declaration.token]: requiredString(4096) }),
    responses: { 200: declaration.response },
    errors: ['token_not_valid'],
    async handle(ctx, { body }, deps) {
      ctx.body = (await declaration.run(deps, body[declaration.token])) ?? {};
    },
  });

/** The token endpoints, outside the versioned roots. */
export const tokenOperations = () => [
  defineOperation({
    method: 'post',
    path: '/authentication/create',
    summary: 'Obtain an access and a refresh token',
    description: 'Any active account gets tokens; the CRM endpoints then require staff permission (403 otherwise).',
    access: 'public',
    body: z.object({ username: requiredString(150), password: requiredString(4096) }),
    responses: { 200: { description: 'The token pair', schema: tokenPair } },
    errors: ['authentication_failed', 'too_many_login_failures', 'too_many_password_checks'],
    async handle(ctx, { body }, { tokens, passwordChecks }) {
      const user = await passwordChecks.check({ username: body.username, password: body.password, clientIp: ctx.ip });
      if (!user) {
        throw new ApiError('authentication_failed', 'No active account found with the given credentials', {
          'WWW-Authenticate': 'Bearer realm="api"',
        });
      }
      ctx.body = issueTokenPair(tokens, user);
    },
  }),
  tokenOperation({
    path: '/authentication/refresh',
    summary: 'Exchange a refresh token for a new token pair',
    description:
      'Rotation: the refresh token used is blocked; a second use of it is a 401 and ends its session (the sign-in it ' +
      'came from), so the token it was rotated into is refused too. A session lasts at most SESSION_MAX_DAYS from its sign-in.',
    token: 'refresh',
    response: { description: 'A new token pair', schema: tokenPair },
    run: ({ db, tokens }, refresh) => rotateRefreshToken(db, tokens, refresh),
  }),
  tokenOperation({
    path: '/authentication/verify',
    summary: 'Check a token',
    description: 'Access or refresh token; 200 with an empty object when valid.',
    token: 'token',
    response: { description: 'The token is valid', schema: empty },
    run: ({ db, tokens }, token) => assertTokenValid(db, tokens, token),
  }),
  tokenOperation({
    path: '/authentication/logout',
    summary: 'Block a refresh token and end its session',
    description: 'Access tokens already issued stay valid until they expire (at most 5 minutes).',
    token: 'refresh',
    response: { description: 'The refresh token is blocked', schema: empty },
    run: ({ db, tokens }, refresh) => revokeRefreshToken(db, tokens, refresh),
  }),
];
