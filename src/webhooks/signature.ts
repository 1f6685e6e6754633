import { timingSafeEqual } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** What Standard Webhooks secrets start with; the base64 of the key follows. */
const SIGNING_SECRET_PREFIX = 'whsec_';

/**
 * The HMAC key of a signing secret. Standard Webhooks secrets are `whsec_` followed by the base64 key; any other
 * value is used as it stands (its UTF-8 bytes), so an operator can also paste a plain shared secret.
 */
export function signingKey(secret: string): Buffer {
  return secret.startsWith(SIGNING_SECRET_PREFIX)
    ? Buffer.from(secret.slice(SIGNING_SECRET_PREFIX.length), 'base64')
    : Buffer.from(secret, 'utf8');
}

/**
 * The shortest key a new signing secret may have. Standard Webhooks libraries generate keys of 24 to 64 bytes (the
 * specification's test secret has 24); a shorter key, and above all an empty one, is refused when a secret is set.
 */
export const MIN_SIGNING_KEY_BYTES = 24;

/** Standard base64, padded: what Standard Webhooks libraries decode (strictly) after `whsec_`. */
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Why a secret cannot be set as the endpoint's signing secret, or undefined. The prefix in another case is refused,
 * as it is almost surely a mistyped Standard Webhooks secret. `whsec_` must be followed by standard
 * base64 (Node decodes anything, skipping what is not base64, so `whsec_!!!…` would be an empty key to us and an
 * error in a subscriber's library), and the key must have MIN_SIGNING_KEY_BYTES. Secrets stored before this rule are
 * not checked again: they sign as they did, and one whose key is empty makes every attempt fail with the reason.
 */
export function signingSecretProblem(secret: string): string | undefined {
  // `WHSEC_…` or `Whsec_…` would be a plain secret by the rule above, a key no Standard Webhooks verifier derives.
  const prefix = secret.slice(0, SIGNING_SECRET_PREFIX.length);
  if (prefix !== SIGNING_SECRET_PREFIX && prefix.toLowerCase() === SIGNING_SECRET_PREFIX) {
    return `starts with ${prefix}: the Standard Webhooks prefix is ${SIGNING_SECRET_PREFIX} in lower case (a plain secret must not start with it in any case)`;
  }
  if (secret.startsWith(SIGNING_SECRET_PREFIX) && !STANDARD_BASE64.test(secret.slice(SIGNING_SECRET_PREFIX.length))) {
    return `${SIGNING_SECRET_PREFIX} must be followed by standard base64 (A-Z, a-z, 0-9, + and /, padded with =), as Standard Webhooks libraries read it`;
  }
  const keyBytes = signingKey(secret).length;
  if (keyBytes < MIN_SIGNING_KEY_BYTES) {
    const form = secret.startsWith(SIGNING_SECRET_PREFIX) ? 'the base64 after whsec_ decodes to' : 'a secret without whsec_ is used as its UTF-8 bytes, here';
    return `the key must have at least ${MIN_SIGNING_KEY_BYTES} bytes (${form} ${keyBytes}); generate one with: echo "whsec_$(openssl rand -base64 32)"`;
  }
  return undefined;
}

export interface SignatureInput {
  /** `webhook-id`: our envelope id, the same on every attempt. */
  messageId: string;
  /** `webhook-timestamp`: seconds since the epoch at sending time, fresh on every attempt. */
  timestampSeconds: number;
  /** The exact bytes of the request body. */
  body: string;
  secret: string;
}

/**
 * Standard Webhooks headers (https://www.standardwebhooks.com/): `webhook-signature` is `v1,` and the base64
 * HMAC-SHA256 of `id.timestamp.body`. Signed by the official `standardwebhooks` package, the same code a
 * consumer verifies with, given our key bytes (so a plain secret's UTF-8 bytes, not the package's Latin-1 reading).
 * It costs about 20 µs per signature against 5 µs for node:crypto (`bench/signature.ts`), nothing next to the
 * ~35 ms of CPU a delivered event takes.
 */
export function signatureHeaders(input: SignatureInput): Record<string, string> {
  const key = signingKey(input.secret);
  // Only a secret stored before signingSecretProblem existed can get here; the message names the cure, not the secret.
  if (key.length === 0) throw new Error('the signing secret decodes to an empty key; set a new one (whsec_ and the base64 of 24 or more random bytes)');
  const signer = new Webhook(key, { format: 'raw' });
  // The package signs whole seconds; the header must carry the same number.
  const timestampSeconds = Math.floor(input.timestampSeconds);
  return {
    'webhook-id': input.messageId,
    'webhook-timestamp': String(timestampSeconds),
    'webhook-signature': signer.sign(input.messageId, new Date(timestampSeconds * 1000), input.body),
  };
}

export type SignatureCheck = 'valid' | 'missing' | 'invalid' | 'stale';

/** Standard Webhooks' tolerance: a timestamp further than this from the receiver's clock is refused (replays). */
export const SIGNATURE_TOLERANCE_SECONDS = 5 * 60;

/**
 * The receiving side, as a subscriber checks a delivery: the headers must be present, the timestamp recent, and one
 * of the space-separated `v1,` signatures must match the body.
 */
export function verifySignature(
  headers: { id?: string; timestamp?: string; signature?: string },
  body: string,
  secret: string,
  nowSeconds: number,
): SignatureCheck {
  if (!headers.id || !headers.timestamp || !headers.signature) return 'missing';
  if (!/^\d{1,12}$/.test(headers.timestamp)) return 'invalid';
  const timestampSeconds = Number(headers.timestamp);
  if (Math.abs(nowSeconds - timestampSeconds) > SIGNATURE_TOLERANCE_SECONDS) return 'stale';
  const expected = Buffer.from(
    signatureHeaders({ messageId: headers.id, timestampSeconds, body, secret })['webhook-signature'],
  );
  const matches = headers.signature.split(' ').some((candidate) => {
    const given = Buffer.from(candidate);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches ? 'valid' : 'invalid';
}
