import { createHash, createSecretKey, type KeyObject, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { ApiError } from '../shared/errors';
import type { User } from '../users/user-store';

export const ACCESS_TOKEN_LIFETIME_SECONDS = 5 * 60;
export const REFRESH_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;

export type TokenType = 'access' | 'refresh';

/**
 * The session a token belongs to: one sign-in and every token rotated from it. Tokens issued before sessions were
 * tracked carry neither claim; such a refresh token is a session of its own that began when it was issued.
 */
export interface Session {
  /** The session id (a UUID), the same in every token of the session. */
  sid: string;
  /** When the session began (seconds since the epoch): the sign-in, carried through every rotation. */
  auth_time: number;
}

export interface TokenClaims extends Partial<Session> {
  token_type: TokenType;
  user_id: number;
  /** The user's token version at issue; a password change, deactivation or demotion raises it (src/auth/accounts.ts). */
  token_version: number;
  jti: string;
  iat: number;
  exp: number;
}

/** Seconds since the epoch; injected so that tests can move past an expiry without sleeping. */
export type Clock = () => number;
export const systemClock: Clock = () => Math.floor(Date.now() / 1000);

export interface TokenSettings {
  /** HS256 secrets: the first signs, every one verifies (config JWT_SECRETS). */
  secrets: readonly string[];
  clock: Clock;
  /** The longest a session lasts from its sign-in (config SESSION_MAX_DAYS): no token of it lives longer. */
  sessionMaxSeconds: number;
}

interface SigningKey {
  kid: string;
  key: KeyObject;
}

/**
 * The key id names a secret without revealing it: a hash prefix, which is no easier to turn back into a 32+
 * character secret than the signatures an attacker already has. Verification picks the key by it instead of trying
 * each one.
 */
const keyIdOf = (secret: string) => createHash('sha256').update(secret, 'utf8').digest('base64url').slice(0, 16);

/**
 * The secrets as key objects, made once per list. Given a string, jsonwebtoken first tries to read it as a PEM key
 * and builds a secret key from the failure, on every call: about 2 ms of CPU per request here (BENCHMARKS.md).
 */
const keyRings = new WeakMap<readonly string[], SigningKey[]>();
function keyRing(secrets: readonly string[]): SigningKey[] {
  let ring = keyRings.get(secrets);
  if (!ring) {
    ring = secrets.map((secret) => ({ kid: keyIdOf(secret), key: createSecretKey(Buffer.from(secret, 'utf8')) }));
    keyRings.set(secrets, ring);
  }
  return ring;
}

function sign(settings: TokenSettings, user: User, session: Session, tokenType: TokenType, lifetime: number): string {
  const [{ kid, key }] = keyRing(settings.secrets);
  const iat = settings.clock();
  const claims: TokenClaims = {
    token_type: tokenType,
    user_id: user.id,
    token_version: user.token_version,
    ...session,
    jti: randomUUID(),
    iat,
    exp: Math.min(iat + lifetime, sessionEndsAt(settings, session)),
  };
  // iat and exp come from the injected clock; jsonwebtoken keeps them as given.
  return jwt.sign(claims, key, { algorithm: 'HS256', keyid: kid });
}

/** When the session's absolute lifetime ends (seconds since the epoch). */
export const sessionEndsAt = (settings: TokenSettings, session: Session) => session.auth_time + settings.sessionMaxSeconds;

/** The session of a verified token; a token from before sessions were tracked is a session of its own. */
export const sessionOf = (claims: TokenClaims): Session => ({ sid: claims.sid ?? claims.jti, auth_time: claims.auth_time ?? claims.iat });

/** A token pair of the session, or of a new one (a sign-in) when none is given. */
export function issueTokenPair(
  settings: TokenSettings,
  user: User,
  session: Session = { sid: randomUUID(), auth_time: settings.clock() },
): { access: string; refresh: string } {
  return {
    access: sign(settings, user, session, 'access', ACCESS_TOKEN_LIFETIME_SECONDS),
    refresh: sign(settings, user, session, 'refresh', REFRESH_TOKEN_LIFETIME_SECONDS),
  };
}

export const tokenNotValid = (message = 'Token is invalid or expired') =>
  new ApiError('token_not_valid', message, { 'WWW-Authenticate': 'Bearer realm="api", error="invalid_token"' });

/** The `kid` of the token's header, unverified (it only picks the key); decoding throws on some malformed payloads. */
function keyIdIn(token: string): string | undefined {
  try {
    return jwt.decode(token, { complete: true })?.header.kid;
  } catch {
    return undefined;
  }
}

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Verifies key id, signature, algorithm (HS256 only: "none" and asymmetric algorithms are refused), expiry and type
 * (either type when none is expected). Every failure is the same 401, so the response does not tell an attacker
 * which check failed. Whether the session still holds (user active, version current, not ended) is
 * src/auth/refresh-tokens.ts and the staff guard.
 */
export function verifyToken(settings: TokenSettings, token: string, expectedType?: TokenType): TokenClaims {
  const kid = keyIdIn(token);
  const signingKey = keyRing(settings.secrets).find((candidate) => candidate.kid === kid);
  if (!signingKey) throw tokenNotValid();
  let claims: unknown;
  try {
    claims = jwt.verify(token, signingKey.key, { algorithms: ['HS256'], clockTimestamp: settings.clock() });
  } catch {
    throw tokenNotValid();
  }
  const c = claims as Partial<TokenClaims>;
  if (
    typeof c !== 'object' ||
    (expectedType ? c.token_type !== expectedType : c.token_type !== 'access' && c.token_type !== 'refresh') ||
    !isCount(c.user_id) ||
    !isCount(c.token_version) ||
    typeof c.jti !== 'string' ||
    typeof c.exp !== 'number' ||
    typeof c.iat !== 'number' ||
    (c.sid !== undefined && !(typeof c.sid === 'string' && UUID.test(c.sid))) ||
    (c.auth_time !== undefined && !isCount(c.auth_time))
  ) {
    throw tokenNotValid();
  }
  return c as TokenClaims;
}
