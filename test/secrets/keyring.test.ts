import { randomBytes } from 'node:crypto';
import { createKeyring, isSealed, parseSecretsKeys, SecretUnreadable } from '../../src/secrets/keyring';

const hexKey = randomBytes(32).toString('hex');
const base64Key = randomBytes(32).toString('base64');
const base64UrlKey = randomBytes(32).toString('base64url');
const PURPOSE = 'webhook_endpoints.basic_auth_password';

describe('SECRETS_KEYS', () => {
  test('keys as 64 hex digits or base64 (standard or URL-safe), first one first; ids derived from the keys', () => {
    const keys = parseSecretsKeys(` ${hexKey}, ${base64Key},${base64UrlKey} `);
    expect(keys.map((key) => key.key)).toEqual([
      Buffer.from(hexKey, 'hex'),
      Buffer.from(base64Key, 'base64'),
      Buffer.from(base64UrlKey, 'base64url'),
    ]);
    expect(keys.map((key) => key.id)).toEqual([expect.stringMatching(/^[0-9a-f]{8}$/), expect.anything(), expect.anything()]);
    expect(parseSecretsKeys(hexKey.toUpperCase())[0].id).toBe(keys[0].id);
  });

  test('refuses anything else, naming the entry and never its value', () => {
    const tooShort = randomBytes(31).toString('hex');
    const tooLong = randomBytes(33).toString('base64');
    for (const [text, message] of [
      [tooShort, 'key 1 is not 32 bytes'],
      [`${hexKey},${tooLong}`, 'key 2 is not 32 bytes'],
      [`${hexKey},`, 'key 2 is not 32 bytes'],
      ['', 'key 1 is not 32 bytes'],
      [`${hexKey.slice(0, 63)}g`, 'key 1 is not 32 bytes'],
      [`${base64Key.slice(0, 42)}!=`, 'key 1 is not 32 bytes'],
      [`${hexKey},${base64Key},${hexKey}`, 'key 3 is listed twice'],
    ]) {
      let error: Error | undefined;
      try {
        parseSecretsKeys(text);
      } catch (err) {
        error = err as Error;
      }
      expect([text, error?.message.startsWith(message)]).toEqual([text, true]);
      for (const key of [hexKey, base64Key, tooShort, tooLong]) expect(error?.message).not.toContain(key);
    }
  });
});

describe('a keyring', () => {
  const [first, second] = parseSecretsKeys(`${hexKey},${base64Key}`);

  test('seals with the first key: not the plaintext, a fresh nonce each time, names its key; opens again', () => {
    const keyring = createKeyring([first, second]);
    const sealed = keyring.seal('crm-pässwort', PURPOSE);
    expect(sealed).toMatch(new RegExp(`^enc:v1:${first.id}:[A-Za-z0-9_-]+$`));
    expect(sealed).not.toContain('crm');
    expect(keyring.seal('crm-pässwort', PURPOSE)).not.toBe(sealed);
    expect(keyring.open(sealed, PURPOSE)).toBe('crm-pässwort');
    expect(keyring.isSealedWithCurrentKey(sealed)).toBe(true);
    expect(keyring.sealingKeyId).toBe(first.id);
  });

  test('every key opens; only the first counts as current', () => {
    const old = createKeyring([second]).seal('old', PURPOSE);
    const keyring = createKeyring([first, second]);
    expect(keyring.open(old, PURPOSE)).toBe('old');
    expect(keyring.isSealedWithCurrentKey(old)).toBe(false);
  });

  test('a value without the envelope is a plain value from before encryption: read as it is, never current', () => {
    const keyring = createKeyring([first]);
    expect(isSealed('legacy-password')).toBe(false);
    expect(keyring.open('legacy-password', PURPOSE)).toBe('legacy-password');
    expect(keyring.isSealedWithCurrentKey('legacy-password')).toBe(false);
    expect(createKeyring([]).open('legacy-password', PURPOSE)).toBe('legacy-password');
  });

  test('refuses a value under an unknown key, altered, truncated, or moved to another place', () => {
    const sealed = createKeyring([first]).seal('secret', PURPOSE);
    const body = sealed.split(':')[3];
    const flipped = `${body.slice(0, 20)}${body[20] === 'A' ? 'B' : 'A'}${body.slice(21)}`;
    const attempts: [string, string, RegExp][] = [
      [sealed, PURPOSE, /sealed with key [0-9a-f]{8}, which SECRETS_KEYS does not contain/],
      [sealed.replace(body, flipped), PURPOSE, /does not open/],
      [sealed.slice(0, 30), PURPOSE, /not a complete sealed value/],
      [sealed, 'webhook_endpoints.signing_secret', /does not open/],
    ];
    for (const [index, [value, purpose, message]] of attempts.entries()) {
      const keyring = createKeyring(index === 0 ? [second] : [first]);
      expect(() => keyring.open(value, purpose)).toThrow(SecretUnreadable);
      expect(() => keyring.open(value, purpose)).toThrow(message);
    }
  });

  test('without keys nothing can be sealed', () => {
    expect(() => createKeyring([]).seal('x', PURPOSE)).toThrow(/no SECRETS_KEYS/);
    expect(createKeyring([]).sealingKeyId).toBeUndefined();
  });
});
