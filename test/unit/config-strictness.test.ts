import { loadConfig } from '../../src/config';
import { PRODUCTION_ENV } from '../support/production-env';

test('NODE_ENV is development, test or production, exactly; anything else does not start', () => {
  expect(loadConfig({}).production).toBe(false);
  expect(loadConfig({ NODE_ENV: 'development' }).production).toBe(false);
  expect(loadConfig({ NODE_ENV: 'test' }).production).toBe(false);
  expect(loadConfig(PRODUCTION_ENV).production).toBe(true);
  for (const spelling of ['Production', 'PRODUCTION', 'prod', 'production ', ' production', 'staging', 'dev', '']) {
    expect(() => loadConfig({ ...PRODUCTION_ENV, NODE_ENV: spelling })).toThrow(
      'Invalid configuration: NODE_ENV: must be one of development, test, production',
    );
  }
});

test('production requires METRICS_TOKEN, of at least 16 characters', () => {
  const { METRICS_TOKEN: _, ...withoutToken } = PRODUCTION_ENV;
  expect(() => loadConfig(withoutToken)).toThrow('Invalid configuration: METRICS_TOKEN is required when NODE_ENV=production');
  expect(() => loadConfig({ ...PRODUCTION_ENV, METRICS_TOKEN: 'short' })).toThrow(/METRICS_TOKEN must be at least 16 characters/);
  expect(loadConfig(PRODUCTION_ENV).metrics.token).toBe(PRODUCTION_ENV.METRICS_TOKEN);
  // Outside production /metrics may stay open (the embedded default on 127.0.0.1).
  expect(loadConfig({}).metrics.token).toBeUndefined();
});
