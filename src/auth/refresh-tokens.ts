import type { Db } from '../db/knex';
import { issueTokenPair, type TokenClaims, tokenNotValid, type TokenSettings, type TokenType, verifyToken } from './tokens';
import { addToBlacklist, isBlacklisted, removeExpiredEntries } from './refresh-token-store';
import { findActiveUser, type User } from './user-store';

/*
 * Refresh tokens are stateless JWTs; the blacklist holds the ones that were rotated or logged out, until they would
 * have expired anyway. Access tokens are not blacklisted: they live five minutes. Every token also ends with its
 * user's session: when the user is deactivated or its token version was raised (password change, deactivation,
 * demotion), every endpoint here refuses it.
 */

const toDate = (secondsSinceEpoch: number) => new Date(secondsSinceEpoch * 1000);

/**
 * Blocks a refresh token; false when it was blocked already. The insert is the check, so two concurrent uses of
 * one token cannot both succeed. Entries past their expiry are removed on the way.
 */
async function blacklist(db: Db, settings: TokenSettings, claims: TokenClaims): Promise<boolean> {
  await removeExpiredEntries(db, toDate(settings.clock()));
  return addToBlacklist(db, { jti: claims.jti, user_id: claims.user_id, expires_at: toDate(claims.exp) });
}

/**
 * The claims and user of a token whose signature, expiry and type hold, and whose session holds: the user is active
 * and still at the token's version. A 401 otherwise.
 */
async function verifySession(
  db: Db,
  settings: TokenSettings,
  token: string,
  expectedType?: TokenType,
): Promise<{ claims: TokenClaims; user: User }> {
  const claims = verifyToken(settings, token, expectedType);
  const user = await findActiveUser(db, claims.user_id);
  if (!user || user.token_version !== claims.token_version) throw tokenNotValid();
  return { claims, user };
}

/** A new access and refresh token for a valid, unused refresh token of a current session; the old one is blocked. */
export async function rotateRefreshToken(
  db: Db,
  settings: TokenSettings,
  token: string,
): Promise<{ access: string; refresh: string }> {
  const { claims, user } = await verifySession(db, settings, token, 'refresh');
  if (!(await blacklist(db, settings, claims))) throw tokenNotValid();
  return issueTokenPair(settings, user);
}

/** Logout: blocks the refresh token. A token that is invalid, expired, of an ended session or already blocked is a 401. */
export async function revokeRefreshToken(db: Db, settings: TokenSettings, token: string): Promise<void> {
  const { claims } = await verifySession(db, settings, token, 'refresh');
  if (!(await blacklist(db, settings, claims))) throw tokenNotValid();
}

/** Either kind of token: valid signature, not expired, of a current session, and for a refresh token not blocked. */
export async function assertTokenValid(db: Db, settings: TokenSettings, token: string): Promise<void> {
  const { claims } = await verifySession(db, settings, token);
  if (claims.token_type === 'refresh' && (await isBlacklisted(db, claims.jti))) throw tokenNotValid();
}
