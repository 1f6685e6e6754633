import { temporalLogger } from '../../src/temporal/logging';
import { captureLogs } from '../support/log-capture';

test("the Temporal SDK's log calls become our JSON lines, with its fields and errors serialised", () => {
  const logs = captureLogs();
  const sdk = temporalLogger(logs.log);
  sdk.warn('Activity failed', { workflowId: 'webhook-event-7', activityType: 'recordAttempt', attempt: 2, error: new Error('connection refused') });
  sdk.log('INFO', 'Worker state changed', { state: 'RUNNING', sdkComponent: 'worker' });
  sdk.debug('no metadata');

  expect(logs.entries()).toEqual([
    expect.objectContaining({
      level: 40,
      component: 'temporal-sdk',
      msg: 'Activity failed',
      workflowId: 'webhook-event-7',
      activityType: 'recordAttempt',
      attempt: 2,
      err: expect.objectContaining({ type: 'Error', message: 'connection refused', stack: expect.stringContaining('connection refused') }),
    }),
    expect.objectContaining({ level: 30, msg: 'Worker state changed', state: 'RUNNING', sdkComponent: 'worker' }),
    expect.objectContaining({ level: 20, msg: 'no metadata' }),
  ]);
  expect(logs.entries()[0]).not.toHaveProperty('error');
});
