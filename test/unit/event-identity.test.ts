import { isOwnWorkflow, memoOf } from '../../src/delivery-rules/event-identity';

const key = '5f0c2a9e-1111-4222-8333-444455556666';
const current = { eventId: 1234, key, workflowId: 'webhook-event-1234-5f0c2a9e' };
const legacy = { ...current, workflowId: 'webhook-event-1234' };

test.each([
  ['its own key, new id', memoOf({ key }), current, true],
  ['its own key, legacy id (a resend run started since)', memoOf({ key }), legacy, true],
  ['another key, new id', memoOf({ key: 'a0c2a9e5-1111-4222-8333-444455556666' }), current, false],
  ['another key, legacy id (another database after the upgrade)', memoOf({ key: 'a0c2a9e5-1111-4222-8333-444455556666' }), legacy, false],
  ['no key, legacy id (the run the previous version started)', {}, legacy, true],
  ['no memo at all, legacy id', undefined, legacy, true],
  ['no key, new id (a workflow started by anything else)', {}, current, false],
  ['a key that is not text', { webhookEventKey: 1234 }, current, false],
])('%s', (_, memo, identity, own) => {
  expect(isOwnWorkflow(memo, identity)).toBe(own);
});
