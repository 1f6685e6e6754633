/**
 * What production requires besides NODE_ENV, with fixed test values: tests that start the app with production rules
 * spread this instead of repeating the list.
 */
export const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  JWT_SECRET: 'test-secret-of-at-least-thirty-two-chars',
  METRICS_TOKEN: 'test-metrics-token-0123456789',
  SECRETS_KEYS: 'e6084b100fcecbe0c7db94d47919919544b147607b7a5e15ed921809893b3e34',
  PUBLIC_URL: 'https://donations.example.org',
} as const;
