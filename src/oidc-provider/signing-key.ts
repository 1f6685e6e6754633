import { createHash, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { persistedGeneratedFile } from '../secrets/local-secret';

/** The private RSA key that signs ID tokens (RS256), as a JWK. */
export interface SigningKey extends JsonWebKey {
  kty: 'RSA';
  kid: string;
  alg: 'RS256';
  use: 'sig';
}

/** The RFC 7638 thumbprint of an RSA key: the key's id, stable for as long as the key is. */
function thumbprint({ e, n }: JsonWebKey): string {
  return createHash('sha256').update(JSON.stringify({ e, kty: 'RSA', n })).digest('base64url');
}

function newSigningKey(): string {
  const jwk = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  return `${JSON.stringify({ ...jwk, kid: thumbprint(jwk), alg: 'RS256', use: 'sig' })}\n`;
}

/**
 * The key from its file, generated there (mode 0600) on the first start. Kept, not made anew at each start: the
 * Temporal UI checks every request's ID token against the provider's keys, so a new key would log everyone out.
 */
export async function persistedSigningKey(file: string): Promise<SigningKey> {
  const key = JSON.parse(await persistedGeneratedFile(file, newSigningKey)) as SigningKey;
  if (key.kty !== 'RSA' || !key.d || key.alg !== 'RS256') throw new Error(`${file} holds no private RS256 key`);
  return key;
}
