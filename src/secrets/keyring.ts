import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets at rest (the endpoint's Basic-auth password and signing secret): AES-256-GCM under the keys of
 * SECRETS_KEYS. The first key seals, every key opens, and each sealed value names its key, so that keys can be
 * rotated: add a new key in front, re-encrypt (src/cli/reencrypt-secrets.ts), drop the old one.
 *
 * A sealed value is `enc:v1:<key id>:<base64url of nonce ‖ ciphertext ‖ tag>`. A value without that prefix was
 * stored before encryption existed and is read as it is, until the re-encrypt command seals it.
 */

export interface SecretKey {
  /** Derived from the key itself, so that one id can never stand for two different keys. */
  id: string;
  key: Buffer;
}

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const SEALED_PREFIX = 'enc:v1:';
const CIPHER = 'aes-256-gcm';

/** The first 8 hex digits of the key's SHA-256: names the key in stored values without revealing it. */
function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

const HEX_KEY = /^[0-9a-fA-F]{64}$/;
const BASE64_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;

/**
 * SECRETS_KEYS: keys separated by commas, each 32 random bytes as 64 hex digits (`openssl rand -hex 32`) or in
 * base64 (`openssl rand -base64 32`). Throws a message naming the entry, never its value.
 */
export function parseSecretsKeys(text: string): SecretKey[] {
  const entries = text.split(',').map((entry) => entry.trim());
  const keys = entries.map((entry, index) => {
    const key = HEX_KEY.test(entry) ? Buffer.from(entry, 'hex') : BASE64_KEY.test(entry) ? Buffer.from(entry, 'base64') : undefined;
    if (key?.length !== KEY_BYTES) {
      throw new Error(`key ${index + 1} is not 32 bytes as 64 hex digits or base64 (generate one with: openssl rand -hex 32)`);
    }
    return { id: keyIdOf(key), key };
  });
  const ids = keys.map((key) => key.id);
  const repeated = ids.findIndex((id, index) => ids.indexOf(id) !== index);
  if (repeated !== -1) throw new Error(`key ${repeated + 1} is listed twice`);
  return keys;
}

export function generateSecretKey(): SecretKey {
  const key = randomBytes(KEY_BYTES);
  return { id: keyIdOf(key), key };
}

/** A stored value that cannot be opened with the configured keys; the message names the key, never a value. */
export class SecretUnreadable extends Error {}

export interface Keyring {
  /** Id of the key that seals; undefined for a keyring without keys, which can only read plain values. */
  readonly sealingKeyId: string | undefined;
  /** `purpose` names where the value lives; a value sealed for one place does not open in another. */
  seal(plaintext: string, purpose: string): string;
  open(stored: string, purpose: string): string;
  /** Whether a stored value is sealed with the sealing key already (false for plain values and older keys). */
  isSealedWithCurrentKey(stored: string): boolean;
}

export function isSealed(stored: string): boolean {
  return stored.startsWith(SEALED_PREFIX);
}

export function createKeyring(keys: readonly SecretKey[]): Keyring {
  const byId = new Map(keys.map((entry) => [entry.id, entry.key]));
  const sealing = keys[0];

  return {
    sealingKeyId: sealing?.id,

    seal(plaintext, purpose) {
      if (!sealing) throw new Error('no SECRETS_KEYS: a secret cannot be stored without a key');
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv(CIPHER, sealing.key, nonce).setAAD(Buffer.from(purpose, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const sealed = Buffer.concat([nonce, ciphertext, cipher.getAuthTag()]).toString('base64url');
      return `${SEALED_PREFIX}${sealing.id}:${sealed}`;
    },

    open(stored, purpose) {
      if (!isSealed(stored)) return stored;
      const [id, sealed = ''] = stored.slice(SEALED_PREFIX.length).split(':', 2);
      const key = byId.get(id);
      if (!key) throw new SecretUnreadable(`${purpose} is sealed with key ${id}, which SECRETS_KEYS does not contain`);
      const bytes = Buffer.from(sealed, 'base64url');
      if (bytes.length < NONCE_BYTES + TAG_BYTES) throw new SecretUnreadable(`${purpose} is not a complete sealed value`);
      try {
        const decipher = createDecipheriv(CIPHER, key, bytes.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES })
          .setAAD(Buffer.from(purpose, 'utf8'))
          .setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
        return Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new SecretUnreadable(`${purpose} does not open with key ${id}: altered, or sealed for another place`);
      }
    },

    isSealedWithCurrentKey(stored) {
      return sealing !== undefined && stored.startsWith(`${SEALED_PREFIX}${sealing.id}:`);
    },
  };
}
