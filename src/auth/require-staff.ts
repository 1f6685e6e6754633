import type { Context, Next } from 'koa';
import type { Db } from '../db/knex';
import { ApiError } from '../shared/errors';
import { parseAuthorization } from './authorization-header';
import type { PasswordChecks } from './password-checks';
import { tokenNotValid, type TokenSettings, verifyToken } from './tokens';
import { findActiveUser, type User } from '../users/user-store';

// Basic is accepted but not offered: a browser answers a Basic challenge with its password prompt and then sends
// what was typed with every request to this origin, also those a page of another origin makes it send. Integrations
// send Basic without being asked (docs/api.md).
const challenge = { 'WWW-Authenticate': 'Bearer realm="api"' };
const notAuthenticated = (message: string) => new ApiError('not_authenticated', message, challenge);

function parseBasic(encoded: string): { username: string; password: string } | undefined {
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon <= 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

async function authenticate(db: Db, tokens: TokenSettings, passwordChecks: PasswordChecks, header: string, clientIp: string): Promise<User> {
  const parsed = parseAuthorization(header);
  if (!parsed) throw notAuthenticated('Malformed Authorization header');
  const { scheme, credentials } = parsed;
  switch (scheme) {
    case 'bearer': {
      const claims = verifyToken(tokens, credentials, 'access');
      const user = await findActiveUser(db, claims.user_id);
      if (!user) throw notAuthenticated('User not found or inactive');
      // A password change, deactivation or demotion since the token was issued.
      if (user.token_version !== claims.token_version) throw tokenNotValid('Session ended; sign in again');
      return user;
    }
    case 'basic': {
      // Every Basic request is a password check, so it is under the failed-login limit like a token request.
      const parsed = parseBasic(credentials);
      const user = parsed && (await passwordChecks.check({ ...parsed, clientIp }));
      if (!user) throw notAuthenticated('Invalid username or password');
      return user;
    }
    default:
      throw notAuthenticated('Unsupported authentication scheme; use Bearer or Basic');
  }
}

/**
 * Bearer (access JWT) or HTTP Basic; only staff accounts pass. 401 when the credentials are missing or wrong,
 * 403 when they are right but the account is not staff.
 */
export function requireStaff(db: Db, tokens: TokenSettings, passwordChecks: PasswordChecks) {
  return async function staffOnly(ctx: Context, next: Next) {
    const header = ctx.get('Authorization');
    if (!header) throw notAuthenticated('Authentication credentials were not provided');
    const user = await authenticate(db, tokens, passwordChecks, header, ctx.ip);
    if (!user.is_staff) throw new ApiError('permission_denied', 'Staff permission required');
    ctx.state.user = user;
    await next();
  };
}
