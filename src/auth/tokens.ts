import { createSecretKey, type KeyObject, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { ApiError } from '../api/errors';
import type { User } from './users';

export const ACCESS_TOKEN_LIFETIME_SECONDS = 5 * 60;
export const REFRESH_TOKEN_LIFETIME_SECONDS = 24 * 60 * 60;

export type TokenType = 'access' | 'refresh';

export interface TokenClaims {
  token_type: TokenType;
  user_id: number;
  /** The user's token version at issue; a password change, deactivation or demotion raises it (src/auth/users.ts). */
  token_version: number;
  jti: string;
  iat: number;
  exp: number;
}

/** Seconds since the epoch; injected so that tests can move past an expiry without sleeping. */
export type Clock = () => number;
export const systemClock: Clock = () => Math.floor(Date.now() / 1000);

export interface TokenSettings {
  secret: string;
  clock: Clock;
}

let cachedKey: { secret: string; key: KeyObject } | undefined;

/**
 * The secret as a key object, made once. Given a string, jsonwebtoken first tries to read it as a PEM key and
 * builds a secret key from the failure, on every call: about 2 ms of CPU per request here (BENCHMARKS.md).
 */
function secretKey(secret: string): KeyObject {
  if (cachedKey?.secret !== secret) cachedKey = { secret, key: createSecretKey(Buffer.from(secret, 'utf8')) };
  return cachedKey.key;
}

function sign(settings: TokenSettings, user: User, tokenType: TokenType, lifetime: number): string {
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
  return jwt.sign(claims, secretKey(settings.secret), { algorithm: 'HS256' });
}

export function issueTokenPair(settings: TokenSettings, user: User): { access: string; refresh: string } {
  return {
    access: sign(settings, user, 'access', ACCESS_TOKEN_LIFETIME_SECONDS),
    refresh: sign(settings, user, 'refresh', REFRESH_TOKEN_LIFETIME_SECONDS),
  };
}

export const tokenNotValid = (message = 'Token is invalid or expired') =>
  new ApiError(401, 'token_not_valid', message, { 'WWW-Authenticate': 'Bearer realm="api", error="invalid_token"' });

const isCount = (value: unknown): value is number => typeof value === 'number' && Number.isSafeInteger(value);

/**
 * Verifies signature, algorithm (HS256 only: "none" and asymmetric algorithms are refused), expiry and type
 * (either type when none is expected). Every failure is the same 401, so the response does not tell an attacker
 * which check failed. Whether the session still holds (user active, version current) is for the caller
 * (src/auth/refresh-tokens.ts, src/auth/require-staff.ts).
 */
export function verifyToken(settings: TokenSettings, token: string, expectedType?: TokenType): TokenClaims {
  let claims: unknown;
  try {
    claims = jwt.verify(token, secretKey(settings.secret), { algorithms: ['HS256'], clockTimestamp: settings.clock() });
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
