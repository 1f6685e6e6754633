import { createHmac } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { signatureHeaders, signingKey } from '../src/webhooks/signature';
import { flags, runMain } from '../stack/cli';
import { markdownTable, median } from './support/stats';

/**
 * Per-signature time of the Standard Webhooks signature as we send it (the official `standardwebhooks` package)
 * against a plain node:crypto HMAC of the same bytes, over a v2.1 payload of typical size. Alternating rounds,
 * medians in microseconds.
 */
const options = flags({ rounds: 7, signatures: 20_000, 'body-bytes': 1500 });

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const body = JSON.stringify({ id: 4711, data: { city: 'Zürich', filler: 'x'.repeat(options['body-bytes']) } });

const VARIANTS: Record<string, () => string> = {
  standardwebhooks: () => signatureHeaders({ messageId: '4711', timestampSeconds: 1700000000, body, secret })['webhook-signature'],
  'node:crypto': () =>
    `v1,${createHmac('sha256', signingKey(secret)).update(`4711.1700000000.${body}`, 'utf8').digest('base64')}`,
};

function microsecondsPerSignature(sign: () => string): number {
  const started = performance.now();
  for (let i = 0; i < options.signatures; i += 1) sign();
  return ((performance.now() - started) * 1000) / options.signatures;
}

runMain(async () => {
  if (VARIANTS.standardwebhooks() !== VARIANTS['node:crypto']()) throw new Error('the two variants disagree');
  const samples: Record<string, number[]> = { standardwebhooks: [], 'node:crypto': [] };
  for (const sign of Object.values(VARIANTS)) microsecondsPerSignature(sign); // warm-up
  for (let round = 0; round < options.rounds; round += 1) {
    for (const [name, sign] of Object.entries(VARIANTS)) samples[name].push(microsecondsPerSignature(sign));
  }
  const rows = Object.entries(samples).map(([variant, values]) => ({
    variant,
    'µs per signature (median)': median(values),
    min: Math.min(...values),
    max: Math.max(...values),
  }));
  process.stdout.write(`${markdownTable(rows)}\n`);
});
