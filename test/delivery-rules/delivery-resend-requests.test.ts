import { readFileSync } from 'node:fs';
import path from 'node:path';
import { adminApiGroup } from '../../src/admin/operations';
import { RESEND_RULE, ResendRequests } from '../../src/delivery-rules/resend-requests';

test('nothing is owed until a request arrives; the next attempt that starts answers it', () => {
  const requests = new ResendRequests();
  expect(requests.pending).toBe(false);
  requests.receive({ seenAttempts: 1 });
  expect(requests.pending).toBe(true);
  requests.attemptStarted(2);
  expect(requests.pending).toBe(false);
});

test('requests that arrive before the attempt starts make one attempt', () => {
  const requests = new ResendRequests();
  requests.receive({ seenAttempts: 1 });
  requests.receive({ seenAttempts: 1 });
  requests.attemptStarted(2);
  expect(requests.pending).toBe(false);
});

test('a repeat that saw no more than the answering attempt did is answered by it (double click, two operators)', () => {
  const requests = new ResendRequests();
  requests.receive({ seenAttempts: 5 });
  requests.attemptStarted(6);
  // Read before attempt 6 was recorded, arriving while it runs or after.
  requests.receive({ seenAttempts: 5 });
  expect(requests.pending).toBe(false);
  // Made after attempt 6 was recorded: a new request.
  requests.receive({ seenAttempts: 6 });
  expect(requests.pending).toBe(true);
});

test('a request that arrives while an attempt nobody asked for runs is answered by the attempt after it', () => {
  const requests = new ResendRequests();
  requests.attemptStarted(1); // the first scheduled attempt, under way
  requests.receive({ seenAttempts: 0 });
  expect(requests.pending).toBe(true);
});

test('a resend run starts from the last manual attempt Postgres recorded', () => {
  const requests = new ResendRequests(6);
  requests.receive({ seenAttempts: 5 });
  expect(requests.pending).toBe(false);
  requests.receive({ seenAttempts: 6 });
  expect(requests.pending).toBe(true);
});

describe('fifteen requests around one attempt', () => {
  test('during a scheduled attempt (the first one, say): one manual attempt right after it', () => {
    const requests = new ResendRequests();
    requests.attemptStarted(1);
    for (let i = 0; i < 15; i++) requests.receive({ seenAttempts: 0 });
    expect(requests.pending).toBe(true);
    requests.attemptStarted(2);
    expect(requests.pending).toBe(false);
  });

  test('during an attempt made for another resend: that attempt, nothing more; after it is recorded, a new one', () => {
    const requests = new ResendRequests();
    requests.receive({ seenAttempts: 1 });
    requests.attemptStarted(2);
    for (let i = 0; i < 15; i++) requests.receive({ seenAttempts: 1 });
    expect(requests.pending).toBe(false);
    requests.receive({ seenAttempts: 2 });
    expect(requests.pending).toBe(true);
  });
});

test('the rule is stated once, in the same words, in the admin API description and both documents', () => {
  const root = path.resolve(__dirname, '../..');
  const words = (text: string) => text.replace(/\s+/g, ' ');
  const resend = adminApiGroup().operations.find((operation) => operation.path === '/webhook-events/:id/resend');
  expect(resend?.description).toContain(RESEND_RULE);
  for (const doc of ['docs/admin.md', 'docs/delivery.md']) {
    const text = words(readFileSync(path.join(root, doc), 'utf8'));
    expect([doc, text.includes(RESEND_RULE)]).toEqual([doc, true]);
    // The two statements that contradicted each other are gone.
    expect([doc, text.includes('is answered by an attempt right after the one under way')]).toEqual([doc, false]);
  }
});
