import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { signatureHeaders, signingKey, signingSecretProblem, verifySignature } from '../../src/webhooks/signature';

test('reproduces the published Standard Webhooks test vector', () => {
  expect(
    signatureHeaders({
      messageId: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
      timestampSeconds: 1614265330,
      body: '{"test": 2432232314}',
      secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    }),
  ).toEqual({
    'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    'webhook-timestamp': '1614265330',
    'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  });
});

test('a whsec_ secret is base64; anything else is used as its UTF-8 bytes', () => {
  expect(signingKey('whsec_AQID')).toEqual(Buffer.from([1, 2, 3]));
  expect(signingKey('plain shared secret')).toEqual(Buffer.from('plain shared secret', 'utf8'));
});

test('signs the exact body bytes, non-ASCII included', () => {
  const body = '{"city":"Zürich"}';
  const { 'webhook-signature': signature } = signatureHeaders({ messageId: '42', timestampSeconds: 1700000000, body, secret: 'k' });
  const expected = createHmac('sha256', 'k').update(Buffer.from(`42.1700000000.${body}`, 'utf8')).digest('base64');
  expect(signature).toBe(`v1,${expected}`);
});

test('a plain secret is keyed by its UTF-8 bytes, non-ASCII included', () => {
  const secret = 'Grüezi-mitenand-2025';
  const { 'webhook-signature': signature } = signatureHeaders({ messageId: '42', timestampSeconds: 1700000000, body: '{}', secret });
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update('42.1700000000.{}').digest('base64');
  expect(signature).toBe(`v1,${expected}`);
});

test('the official verifier accepts a whsec_ signature as a subscriber configures it, and a plain one by its bytes', () => {
  const body = '{"id":7,"city":"Zürich"}';
  const now = Math.floor(Date.now() / 1000);
  const whsec = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  expect(new Webhook(whsec).verify(body, signatureHeaders({ messageId: '7', timestampSeconds: now, body, secret: whsec }))).toEqual(
    JSON.parse(body),
  );
  const plain = 'Grüezi-mitenand-2025';
  const headers = signatureHeaders({ messageId: '7', timestampSeconds: now + 0.9, body, secret: plain });
  expect(headers['webhook-timestamp']).toBe(String(now));
  expect(() => new Webhook(new TextEncoder().encode(plain), { format: 'raw' }).verify(body, headers)).not.toThrow();
  expect(() => new Webhook(new TextEncoder().encode(plain), { format: 'raw' }).verify(`${body} `, headers)).toThrow(/signature/);
});

describe('verifySignature', () => {
  const body = '{"id":7,"event":"donation.completed"}';
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const signed = signatureHeaders({ messageId: '7', timestampSeconds: 1700000000, body, secret });
  const headers = { id: signed['webhook-id'], timestamp: signed['webhook-timestamp'], signature: signed['webhook-signature'] };

  test('accepts what signatureHeaders produced, also among several signatures', () => {
    expect(verifySignature(headers, body, secret, 1700000010)).toBe('valid');
    expect(verifySignature({ ...headers, signature: `v1,b3RoZXI= ${headers.signature}` }, body, secret, 1700000010)).toBe('valid');
  });

  test('refuses a changed body, another secret, another id or a malformed timestamp', () => {
    expect(verifySignature(headers, body.replace('7', '8'), secret, 1700000010)).toBe('invalid');
    expect(verifySignature(headers, body, 'whsec_b3RoZXIgc2VjcmV0', 1700000010)).toBe('invalid');
    expect(verifySignature({ ...headers, id: '8' }, body, secret, 1700000010)).toBe('invalid');
    expect(verifySignature({ ...headers, timestamp: '17e8' }, body, secret, 1700000010)).toBe('invalid');
  });

  test('refuses missing headers and timestamps outside the five-minute tolerance', () => {
    expect(verifySignature({ ...headers, signature: undefined }, body, secret, 1700000010)).toBe('missing');
    expect(verifySignature(headers, body, secret, 1700000000 + 301)).toBe('stale');
    expect(verifySignature(headers, body, secret, 1700000000 - 301)).toBe('stale');
    expect(verifySignature(headers, body, secret, 1700000000 + 300)).toBe('valid');
  });
});

describe('a new signing secret', () => {
  const whsec = (bytes: number) => `whsec_${Buffer.alloc(bytes, 7).toString('base64')}`;

  test('needs a key of 24 bytes or more, as Standard Webhooks libraries generate', () => {
    expect(signingSecretProblem('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')).toBeUndefined(); // the specification's, 24 bytes
    expect(signingSecretProblem(whsec(64))).toBeUndefined();
    expect(signingSecretProblem(whsec(23))).toMatch(/at least 24 bytes \(the base64 after whsec_ decodes to 23\)/);
    expect(signingSecretProblem('whsec_c2VjcmV0LXNpZ25pbmcta2V5')).toMatch(/decodes to 18/); // 9- to 23-byte keys were accepted
    expect(signingSecretProblem('a plain secret of 24 byt')).toBeUndefined();
    expect(signingSecretProblem('a plain secret, 23 byte')).toMatch(/UTF-8 bytes, here 23/);
  });

  test('refuses every whsec_ secret whose base64 Node would read as an empty (or another) key', () => {
    for (const secret of [
      'whsec_=================',
      'whsec_!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!',
      'whsec_',
      `whsec_${Buffer.alloc(32, 7).toString('base64url')}`, // URL-safe alphabet: another key to a strict decoder
      `whsec_${Buffer.alloc(32, 7).toString('base64').replace(/=+$/, '')}`, // unpadded
      `whsec_${Buffer.alloc(30, 7).toString('base64')}!`,
    ]) {
      expect([secret, signingSecretProblem(secret)]).toEqual([secret, expect.stringMatching(/standard base64|at least 24 bytes/)]);
    }
    expect(signingKey('whsec_=================')).toHaveLength(0);
  });

  test('refuses the prefix in another case: a mistyped Standard Webhooks secret, not a plain one', () => {
    const base64 = Buffer.alloc(32, 7).toString('base64');
    for (const prefix of ['WHSEC_', 'Whsec_', 'whSec_', 'wHSEC_']) {
      expect([prefix, signingSecretProblem(`${prefix}${base64}`)]).toEqual([prefix, expect.stringMatching(`starts with ${prefix}: .* whsec_ in lower case`)]);
    }
    // Only the prefix counts: the same letters later, or without the underscore, are a plain secret like any other.
    expect(signingSecretProblem(`whsec_${base64}`)).toBeUndefined();
    expect(signingSecretProblem(`WHSEC${base64}`)).toBeUndefined();
    expect(signingSecretProblem(`plain-secret-WHSEC_${base64}`)).toBeUndefined();
  });

  test('a stored secret with an empty key cannot sign: the error names the cure, not the secret', () => {
    expect(() => signatureHeaders({ messageId: '1', timestampSeconds: 1, body: '{}', secret: 'whsec_=================' })).toThrow(
      'the signing secret decodes to an empty key; set a new one (whsec_ and the base64 of 24 or more random bytes)',
    );
  });
});
