import { createHash, createSecretKey, type KeyObject, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { ApiError } from '../shared/errors';
import type { User } from './user-store';

export const ACCESS_TOKEN_LIFETIME_SECONDS = 5 * 60;
export const REFRESH_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;

export type TokenType = 'access' | 'refresh';

export interface TokenClaims {
  token_type: TokenType;
  user_id: number;
  /** The user's token version at issue; a password change, deactivation or demotion raises it (src/auth/sessions.ts). */
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

function sign(settings: TokenSettings, user: User, tokenType: TokenType, lifetime: number): string {
  const [{ kid, key }] = keyRing(settings.secrets);
  const iat = settings.clock();
  const claims: TokenClaims = {
    token_type: tokenType,
    user_id: user.id,
    token_version: user.token_version,
    jti: randomUUID(),
    iat,
    exp: iat + lifetime,
  };
  // iat and exp come from the injected clock; jsonwebtoken keeps them as given.
  return jwt.sign(claims, key, { algorithm: 'HS256', keyid: kid });
}

export function issueTokenPair(settings: TokenSettings, user: User): { access: string; refresh: string } {
  return {
    access: sign(settings, user, 'access', ACCESS_TOKEN_LIFETIME_SECONDS),
    refresh: sign(settings, user, 'refresh', REFRESH_TOKEN_LIFETIME_SECONDS),
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

/**
 * Verifies key id, signature, algorithm (HS256 only: "none" and asymmetric algorithms are refused), expiry and type
 * (either type when none is expected). Every failure is the same 401, so the response does not tell an attacker
 * which check failed. Whether the session still holds (user active, version current) is src/auth/sessions.ts.
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
    typeof c.exp !== 'number'
  ) {
    throw tokenNotValid();
  }
  return c as TokenClaims;
}
