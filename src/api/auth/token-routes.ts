import { z } from 'zod';
import { assertTokenValid, revokeRefreshToken, rotateRefreshToken } from '../../auth/refresh-tokens';
import { issueTokenPair } from '../../auth/tokens';
import { verifyCredentials } from '../../auth/users';
import { ApiError } from '../../shared/errors';
import { defineOperation } from '../../http/operation';

// Body messages are prefixed with their field's path (`password: is required`).
const requiredString = (max: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? 'is required' : 'must be a string') })
    .min(1, { error: 'must not be empty' })
    .max(max, { error: 'is too long' });

const tokenPair = z
  .strictObject({
    access: z.string().meta({ description: 'Access token (JWT), valid 5 minutes' }),
    refresh: z.string().meta({ description: 'Refresh token (JWT), valid 1 day, usable once' }),
  })
  .meta({ id: 'TokenPair' });
const empty = z.strictObject({}).meta({ id: 'Empty' });

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
    errors: ['authentication_failed', 'too_many_login_failures'],
    async handle(ctx, { body }, { db, tokens, loginThrottle: throttle }) {
      const user = await throttle.check({ username: body.username, clientIp: ctx.ip }, () =>
        verifyCredentials(db, body.username, body.password),
      );
      if (!user) {
        throw new ApiError('authentication_failed', 'No active account found with the given credentials', {
          'WWW-Authenticate': 'Bearer realm="api"',
        });
      }
      ctx.body = issueTokenPair(tokens, user);
    },
  }),
  defineOperation({
    method: 'post',
    path: '/authentication/refresh',
    summary: 'Exchange a refresh token for a new token pair',
    description: 'Rotation: the refresh token used is blocked, so a second use of it is a 401.',
    access: 'public',
    body: z.object({ refresh: requiredString(4096) }),
    responses: { 200: { description: 'A new token pair', schema: tokenPair } },
    errors: ['token_not_valid'],
    async handle(ctx, { body }, { db, tokens }) {
      ctx.body = await rotateRefreshToken(db, tokens, body.refresh);
    },
  }),
  defineOperation({
    method: 'post',
    path: '/authentication/verify',
    summary: 'Check a token',
    description: 'Access or refresh token; 200 with an empty object when valid.',
    access: 'public',
    body: z.object({ token: requiredString(4096) }),
    responses: { 200: { description: 'The token is valid', schema: empty } },
    errors: ['token_not_valid'],
    async handle(ctx, { body }, { db, tokens }) {
      await assertTokenValid(db, tokens, body.token);
      ctx.body = {};
    },
  }),
  defineOperation({
    method: 'post',
    path: '/authentication/logout',
    summary: 'Block a refresh token',
    description: 'Access tokens already issued stay valid until they expire (at most 5 minutes).',
    access: 'public',
    body: z.object({ refresh: requiredString(4096) }),
    responses: { 200: { description: 'The refresh token is blocked', schema: empty } },
    errors: ['token_not_valid'],
    async handle(ctx, { body }, { db, tokens }) {
      await revokeRefreshToken(db, tokens, body.refresh);
      ctx.body = {};
    },
  }),
];
