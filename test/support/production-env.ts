/**
 * What production requires besides NODE_ENV, with fixed test values: tests that start the app with production rules
 * spread this instead of repeating the list.
 */
export const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  JWT_SECRET: 'test-secret-of-at-least-thirty-two-chars',
  METRICS_TOKEN: 'test-metrics-token-0123456789',
  SECRETS_KEYS: '5e'.repeat(32),
} as const;
