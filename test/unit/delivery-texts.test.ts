import {
  attemptingDetails,
  attemptSummary,
  backoffSummary,
  deliveryDetails,
  deliverySummary,
  recordedDetails,
} from '../../src/delivery-rules/delivery-texts';

const facts = {
  eventId: 1234,
  eventType: 'donation.completed',
  payloadVersion: 'v2.1',
  subscriberHost: 'crm.example.org',
  transactionId: 'pi_3Q7',
  environment: 'prod',
};
// 09:20 UTC is 11:20 in Zurich in July (UTC+2).
const at = (iso: string) => Date.parse(iso);
const failedSecond = {
  attemptNumber: 2,
  attempt: { kind: 'scheduled', number: 2 } as const,
  responseCode: 500,
  error: null,
  startedAtMs: at('2025-07-15T09:20:00Z'),
  durationMs: 83,
};

test('summary and details say which event goes where', () => {
  expect(deliverySummary(facts)).toBe('donation.completed #1234 → crm.example.org');
  expect(deliverySummary(facts, 'resend')).toBe('Resend: donation.completed #1234 → crm.example.org');
  expect(deliverySummary(facts, 'resume')).toBe('Resumed: donation.completed #1234 → crm.example.org');
  expect(deliveryDetails(facts)).toBe(
    '**Event:** donation.completed, id 1234\n**Payload version:** v2.1\n**Subscriber:** crm.example.org\n**Transaction:** pi_3Q7\n**Environment:** prod',
  );
  expect(deliveryDetails({ ...facts, transactionId: null, environment: null })).not.toMatch(/Transaction|Environment/);
});

test('current details in the admin page’s words, in Swiss local time', () => {
  expect(attemptingDetails('waiting', 1, { kind: 'scheduled', number: 1 })).toBe('Wartend — Versuch 1 von 5 läuft');
  expect(recordedDetails('failed', failedSecond, at('2025-07-15T09:35:00Z'))).toBe(
    'Fehlgeschlagen — Versuch 2 von 5 um 11:20 (HTTP 500 in 83 ms), nächster Versuch um 11:35',
  );
  expect(recordedDetails('delivered', { ...failedSecond, attemptNumber: 6, attempt: { kind: 'manual' }, responseCode: 200 }, null)).toBe(
    'Zugestellt — manueller Versuch (Nr. 6) um 11:20 (HTTP 200 in 83 ms)',
  );
});

test('an attempt without an answer shows its error, shortened; one on another day shows the day', () => {
  const lateFourth = {
    ...failedSecond,
    attempt: { kind: 'scheduled', number: 4 } as const,
    responseCode: null,
    error: `Connection error: ${'x'.repeat(200)}`,
    startedAtMs: at('2025-07-15T21:10:00Z'), // 23:10 in Zurich
  };
  const details = recordedDetails('failed', lateFourth, at('2025-07-16T01:10:00Z'));
  expect(details).toMatch(/^Fehlgeschlagen — Versuch 4 von 5 um 23:10 \(Connection error: x+… in 83 ms\), nächster Versuch um 16\.07\. 03:10$/);
  expect(details.length).toBeLessThan(200);
});

test('attempts and backoffs carry summaries in Temporal UI', () => {
  expect(attemptSummary(2, { kind: 'scheduled', number: 2 })).toBe('POST attempt 2 of 5');
  expect(attemptSummary(6, { kind: 'manual' })).toBe('POST manual attempt (no. 6)');
  expect(backoffSummary(failedSecond, at('2025-07-15T09:35:00Z'))).toBe('Next attempt at 11:35 (Zurich), after attempt 2 → HTTP 500 in 83 ms');
});
