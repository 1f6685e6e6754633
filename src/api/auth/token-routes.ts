import { z } from 'zod';
import { assertTokenValid, revokeRefreshToken, rotateRefreshToken } from '../../auth/refresh-tokens';
import { issueTokenPair } from '../../auth/tokens';
import { verifyCredentials } from '../../auth/users';
import { ApiError } from '../errors';
import { defineOperation } from '../operation';

const requiredString = (name: string, max: number) =>
  z
    .string({ error: (issue) => (issue.input === undefined ? `${name} is required` : `${name} must be a string`) })
    .min(1, { error: `${name} must not be empty` })
    .max(max, { error: `${name} is too long` });

const tokenPair = z
  .strictObject({
    access: z.string().meta({ description: 'Access token (JWT), valid 5 minutes' }),
    refresh: z.string().meta({ description: 'Refresh token (JWT), valid 1 day, usable once' }),
  })
  .meta({ id: 'TokenPair' });
const empty = z.strictObject({}).meta({ id: 'Empty' });
const tokenNotValid = 'Token invalid, expired or blocked (code token_not_valid)';

/** The token endpoints, outside the versioned roots. */
export const tokenOperations = () => [
  defineOperation({
    method: 'post',
    path: '/authentication/create',
    summary: 'Obtain an access and a refresh token',
    description: 'Any active account gets tokens; the CRM endpoints then require staff permission (403 otherwise).',
    auth: 'public',
    body: z.object({ username: requiredString('username', 150), password: requiredString('password', 4096) }),
    response: { description: 'The token pair', schema: tokenPair },
    errors: {
      401: 'Wrong username or password, or inactive account',
      429: 'Too many failed logins for this user name from this address; wait as long as Retry-After says',
    },
    async handle(ctx, { body }, { db, tokens, loginThrottle: throttle }) {
      const user = await throttle.check({ username: body.username, clientIp: ctx.ip }, () =>
        verifyCredentials(db, body.username, body.password),
      );
      if (!user) {
        throw new ApiError(401, 'authentication_failed', 'No active account found with the given credentials', {
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
    auth: 'public',
    body: z.object({ refresh: requiredString('refresh', 4096) }),
    response: { description: 'A new token pair', schema: tokenPair },
    errors: { 401: tokenNotValid },
    async handle(ctx, { body }, { db, tokens }) {
      ctx.body = await rotateRefreshToken(db, tokens, body.refresh);
    },
  }),
  defineOperation({
    method: 'post',
    path: '/authentication/verify',
    summary: 'Check a token',
    description: 'Access or refresh token; 200 with an empty object when valid.',
    auth: 'public',
    body: z.object({ token: requiredString('token', 4096) }),
    response: { description: 'The token is valid', schema: empty },
    errors: { 401: tokenNotValid },
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
    auth: 'public',
    body: z.object({ refresh: requiredString('refresh', 4096) }),
    response: { description: 'The refresh token is blocked', schema: empty },
    errors: { 401: tokenNotValid },
    async handle(ctx, { body }, { db, tokens }) {
      await revokeRefreshToken(db, tokens, body.refresh);
      ctx.body = {};
    },
  }),
];
