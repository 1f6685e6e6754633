import { loadConfig } from '../../src/config';
import { purgeDetails, retentionCutoffs, retentionDetails, retentionSummary } from '../../src/delivery-rules/retention';

test('the cutoffs are the limits counted back from when the purge runs', () => {
  const now = Date.parse('2025-07-16T01:15:00Z');
  expect(retentionCutoffs(now, { eventRetentionDays: 90, payloadRetentionDays: 30 })).toEqual({
    eventsCreatedBefore: '2025-04-17T01:15:00.000Z',
    payloadsCreatedBefore: '2025-06-16T01:15:00.000Z',
  });
});

test('Temporal UI says what the purge keeps and deletes, and where it stands', () => {
  expect(retentionSummary({ eventRetentionDays: 90, payloadRetentionDays: 90 })).toBe('Retention: delete ended webhook events after 90 days');
  expect(retentionSummary({ eventRetentionDays: 90, payloadRetentionDays: 30 })).toBe(
    'Retention: delete ended webhook events after 90 days, payloads after 30 days',
  );
  expect(retentionDetails({ eventRetentionDays: 90, payloadRetentionDays: 30 })).toContain('events waiting or failed (a retry is scheduled)');
  expect(purgeDetails({ deletedEvents: 1200, deletedAttempts: 2500, droppedPayloads: 40, passedOver: 1 }, 'payloads')).toBe(
    'Payloads werden entfernt — 1200 Ereignisse mit 2500 Versuchen gelöscht, 40 Payloads entfernt, 1 übergangen (Workflow läuft)',
  );
});

test('EVENT_RETENTION_DAYS defaults to 90, PAYLOAD_RETENTION_DAYS to it, and a payload never outlives its event', () => {
  expect(loadConfig({}).retention).toEqual({ eventDays: 90, payloadDays: 90 });
  expect(loadConfig({ EVENT_RETENTION_DAYS: '30' }).retention).toEqual({ eventDays: 30, payloadDays: 30 });
  expect(loadConfig({ EVENT_RETENTION_DAYS: '365', PAYLOAD_RETENTION_DAYS: '30' }).retention).toEqual({ eventDays: 365, payloadDays: 30 });
  expect(() => loadConfig({ EVENT_RETENTION_DAYS: '30', PAYLOAD_RETENTION_DAYS: '31' })).toThrow(
    'Invalid configuration: PAYLOAD_RETENTION_DAYS must not be longer than EVENT_RETENTION_DAYS',
  );
  for (const wrong of ['0', '-1', '1.5', 'ninety']) {
    expect(() => loadConfig({ EVENT_RETENTION_DAYS: wrong })).toThrow(/^Invalid configuration: EVENT_RETENTION_DAYS/);
  }
});
