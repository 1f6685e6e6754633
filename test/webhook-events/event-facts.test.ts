import { loadConfig } from '../../src/config';
import { seedDemoData } from '../../src/demo/seed';
import { listEvents } from '../../src/webhook-events/admin-queries';
import { recordTestEvent } from '../../src/webhook-events/test-events';
import { WEBHOOK_EVENT_TYPES } from '../../src/webhooks/event-types';
import { PAYLOAD_VERSIONS } from '../../src/webhooks/payload-versions';
import { createTestDatabase } from '../support/database';
import { saveEndpointForEveryEvent } from '../support/webhook-rows';

// Render once, carry the facts: an event is stored with the facts its renderer gave (environment, transaction id,
// e-mail, numbers), and nothing reads them back from the payload. These must be what the payload says, for every
// event type on every version, or the admin would find events by what was never sent, and Temporal UI would show
// deliveries by it.

interface Subject {
  id?: string;
  email?: string;
  donor?: { email: string };
  customer?: { email: string };
  payment?: { transaction_id: string };
  positions?: Array<{ id: string }>;
}

/** What an envelope holds, read from its bytes the way a subscriber would. */
function factsInPayload(payload: string) {
  const { environment, data } = JSON.parse(payload) as { environment: string; data: Record<string, Subject> };
  const [[kind, subject]] = Object.entries(data);
  const numbers = kind === 'newsletter_subscription' ? [] : [subject.id!, ...(subject.positions ?? []).map((position) => position.id)];
  const email = subject.donor?.email ?? subject.customer?.email ?? subject.email!;
  return {
    environment,
    transaction_id: subject.payment?.transaction_id ?? null,
    donor_email: email.trim().toLowerCase(),
    references: [...new Set(numbers)].sort(),
  };
}

describe('every event the platform renders, and every test event, is stored with the facts its payload holds, and found by them', () => {
  const now = new Date('2026-03-01T12:00:00Z');
  const config = loadConfig({});

  test.each(PAYLOAD_VERSIONS)('%s', async (version) => {
    const { db } = await createTestDatabase();
    try {
      await saveEndpointForEveryEvent(db, { payload_version: version }, now);
      await seedDemoData(db, config, now);
      for (const event of WEBHOOK_EVENT_TYPES) expect((await recordTestEvent(db, event, now)).kind).toBe('created');

      const numbers = db.raw(
        "coalesce((SELECT array_agg(reference ORDER BY reference) FROM webhook_event_references WHERE event_id = e.id), '{}') AS references",
      );
      const rows: Array<{ id: number; event_type: string; payload: string } & ReturnType<typeof factsInPayload>> = await db('webhook_events as e')
        .select('id', 'event_type', 'payload', 'environment', 'transaction_id', 'donor_email', numbers)
        .orderBy('id');
      const seen = new Set<string>();
      for (const { id, event_type, payload, ...stored } of rows) {
        expect({ id, event_type, ...stored }).toEqual({ id, event_type, ...factsInPayload(payload) });
        seen.add(`${event_type} ${stored.environment} ${stored.references.length > 1 ? 'positions' : 'one'}`);

        // The admin finds it by each of them (all from columns).
        const found = async (filters: Parameters<typeof listEvents>[1]) =>
          (await listEvents(db, filters, { limit: 1000, offset: 0 })).rows.map((row) => row.id);
        if (stored.transaction_id !== null) expect(await found({ transactionId: stored.transaction_id })).toContain(id);
        expect(await found({ email: stored.donor_email.toUpperCase() })).toContain(id);
        for (const reference of stored.references) expect(await found({ reference })).toContain(id);
      }
      // Every type, in both environments of the demo data, and v2.1's whole checkouts with their positions.
      for (const event of WEBHOOK_EVENT_TYPES) expect([...seen].some((what) => what.startsWith(`${event} test`))).toBe(true);
      expect([...seen].some((what) => what.includes(' prod '))).toBe(true);
      expect(seen.has('donation.completed prod positions')).toBe(version === 'v2.1');
    } finally {
      await db.destroy();
    }
  });
});
