import type { Db } from '../db/knex';
import {
  issueTokenPair,
  REFRESH_TOKEN_LIFETIME_SECONDS,
  sessionEndsAt,
  sessionOf,
  type TokenClaims,
  tokenNotValid,
  type TokenSettings,
  type TokenType,
  verifyToken,
} from './tokens';
import { addToBlacklist, isBlacklisted, removeExpiredEntries } from '../users/refresh-token-store';
import { isSessionEnded, recordSessionEnd, removeExpiredSessionEnds, type SessionEndReason } from '../users/session-store';
import { findActiveUser, type User } from '../users/user-store';

/*
 * Refresh tokens are stateless JWTs; the blacklist holds the ones that were rotated or logged out, until they would
 * have expired anyway. Access tokens are not blacklisted: they live five minutes. Every token also ends with its
 * user's session: when the user is deactivated or its token version was raised (password change, deactivation,
 * demotion), every endpoint here refuses it.
 *
 * A session (claim `sid`) is one sign-in and every refresh token rotated from it. Its refresh tokens are refused
 * once it has ended: by logout, or when one of its refresh tokens that was rotated already is presented again. Only
 * one party can hold the newest token of a session, so a second use of an older one means that two parties hold
 * the session, one of them with a stolen token, and nobody can tell which: the whole session ends (reuse
 * detection, as RFC 9700 §4.14.2 describes). A session also ends `sessionMaxSeconds` after its sign-in, however
 * often it was refreshed.
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

/** Ends the token's session: none of its refresh tokens is accepted from now on. */
async function endSession(db: Db, settings: TokenSettings, claims: TokenClaims, reason: SessionEndReason): Promise<void> {
  const now = settings.clock();
  await removeExpiredSessionEnds(db, toDate(now));
  await recordSessionEnd(db, {
    session_id: sessionOf(claims).sid,
    user_id: claims.user_id,
    reason,
    ended_at: toDate(now),
    // Every token of the session was issued before now, for at most a day: all have expired by then.
    expires_at: toDate(now + REFRESH_TOKEN_LIFETIME_SECONDS),
  });
}

/**
 * The claims and user of a token whose signature, expiry and type hold, and whose session holds: the user is active
 * and still at the token's version; for a refresh token also: its session has not ended and is within its lifetime.
 * A 401 otherwise.
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
  if (claims.token_type === 'refresh') {
    const session = sessionOf(claims);
    if (settings.clock() >= sessionEndsAt(settings, session)) throw tokenNotValid('Session expired; sign in again');
    if (await isSessionEnded(db, session.sid)) throw tokenNotValid('Session ended; sign in again');
  }
  return { claims, user };
}

/** A valid refresh token, blocked as it is used; one used before ends its session (a stolen copy is in play) and is a 401. */
async function useRefreshTokenOnce(db: Db, settings: TokenSettings, token: string) {
  const session = await verifySession(db, settings, token, 'refresh');
  if (!(await blacklist(db, settings, session.claims))) {
    await endSession(db, settings, session.claims, 'refresh_token_reused');
    throw tokenNotValid();
  }
  return session;
}

/**
 * A new access and refresh token of the same session for a valid, unused refresh token; the old one is blocked. A
 * refresh token that was rotated already ends its session.
 */
export async function rotateRefreshToken(
  db: Db,
  settings: TokenSettings,
  token: string,
): Promise<{ access: string; refresh: string }> {
  const { claims, user } = await useRefreshTokenOnce(db, settings, token);
  return issueTokenPair(settings, user, sessionOf(claims));
}

/**
 * Logout: blocks the refresh token and ends its session. A token that is invalid, expired, of an ended session or
 * already blocked is a 401.
 */
export async function revokeRefreshToken(db: Db, settings: TokenSettings, token: string): Promise<void> {
  const { claims } = await useRefreshTokenOnce(db, settings, token);
  await endSession(db, settings, claims, 'logout');
}

/** Either kind of token: valid signature, not expired, of a current session, and for a refresh token not blocked. */
export async function assertTokenValid(db: Db, settings: TokenSettings, token: string): Promise<void> {
  const { claims } = await verifySession(db, settings, token);
  if (claims.token_type === 'refresh' && (await isBlacklisted(db, claims.jti))) throw tokenNotValid();
}
