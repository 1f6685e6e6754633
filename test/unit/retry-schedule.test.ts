import { delayAfterFailedAttempt, MAX_ATTEMPTS, RESPONSE_TIMEOUT_MS, RETRY_DELAYS_MS } from '../../src/delivery-rules/retry-schedule';
import { DEFAULT_HTTP_SETTINGS } from '../../activities/delivery-activities';

const minutes = (n: number) => n * 60_000;

test('five attempts with 5 min, 15 min, 1 h and 4 h between them', () => {
  expect(MAX_ATTEMPTS).toBe(5);
  expect(RETRY_DELAYS_MS).toEqual([minutes(5), minutes(15), minutes(60), minutes(240)]);
  expect([1, 2, 3, 4].map(delayAfterFailedAttempt)).toEqual([minutes(5), minutes(15), minutes(60), minutes(240)]);
});

test('no attempt follows the fifth, and nonsense attempt numbers have no delay', () => {
  for (const attempt of [5, 6, 0, -1, 1.5, Number.NaN]) expect(delayAfterFailedAttempt(attempt)).toBeUndefined();
});

test('the production response time limit is the spec’s 30 seconds', () => {
  expect(RESPONSE_TIMEOUT_MS).toBe(30_000);
  expect(DEFAULT_HTTP_SETTINGS.timeoutMs).toBe(30_000);
});

test('the User-Agent names the service and its version', () => {
  expect(DEFAULT_HTTP_SETTINGS.userAgent).toMatch(/^donation-webhooks\/\d+\.\d+\.\d+ /);
});
