/**
 * `npm run test:stack`: the end-to-end test on the production-like stack (test/stack/, docs/stack-without-docker.md). Apart
 * from `npm test` because it needs the Temporal server and Caddy built from their Go modules (`npm run stack` does
 * it once) and starts a dozen processes; it brings its own Postgres, so the suite's global set-up is not needed.
 */
const base = require('./jest.config');

module.exports = {
  ...base,
  roots: ['<rootDir>/test/stack'],
  testMatch: ['**/*.stack.ts'],
  globalSetup: undefined,
  globalTeardown: undefined,
  maxWorkers: 1,
  testTimeout: 120_000,
};
