import type { AttemptKind, AttemptOutcome } from '../../src/delivery-rules/delivery-status';
import type { Db } from '../../src/db/knex';
import { recordAttempt } from '../../src/webhook-events/attempts';
import { countEventsByStatus } from '../../src/webhook-events/gauge-counts';
import { deleteEndedEvents } from '../../src/webhook-events/retention-batches';
import { testDatabases } from '../support/database';
import { eventCountsRecounted } from '../support/event-counts';
import { insertEndpoint, insertEvent } from '../support/webhook-rows';

// The counts behind the `webhook_events{status}` gauge are kept by Postgres as events are written (migration 024):
// whatever writes an event, they must equal a count of the table.

const databases = testDatabases();
afterAll(databases.destroyAll);

/** Events per status, counted afresh (what the gauge counted at every scrape before migration 024). */
const recounted = async (db: Db) => new Map(Object.entries(await eventCountsRecounted(db)));

/** The kept counts as the gauge reads them, without the statuses no event has (a count can fall back to 0). */
async function kept(db: Db): Promise<Map<string, number>> {
  return new Map([...(await countEventsByStatus(db))].filter(([, count]) => count !== 0));
}

const record = (db: Db, eventId: number, attemptNumber: number, attempt: AttemptKind, outcome: AttemptOutcome) =>
  recordAttempt(db, {
    eventId,
    attemptNumber,
    attempt: { ...attempt, outcome },
    result: { outcome, responseCode: outcome === 'delivered' ? 200 : 500, error: null, startedAtMs: Date.now(), durationMs: 5 },
    responseBody: null,
    retryDelayMs: attempt.kind === 'scheduled' ? 300_000 : null,
  });

test('inserts, attempts that change the status, attempts that do not, a retried record and the retention purge keep the counts a recount gives', async () => {
  const db = await databases.create();
  const endpoint = await insertEndpoint(db, { url: 'https://crm.example.org/hooks' });
  const events = [];
  for (let i = 0; i < 6; i++) events.push((await insertEvent(db, endpoint)).id);
  // The previous release, still writing during a deploy, is counted too.
  events.push((await insertEvent(db, endpoint, { asPreviousRelease: true })).id);
  expect(await kept(db)).toEqual(new Map([['waiting', 7]]));

  await record(db, events[0], 1, { kind: 'scheduled', number: 1 }, 'delivered');
  await record(db, events[0], 1, { kind: 'scheduled', number: 1 }, 'delivered'); // a retried write changes nothing
  await record(db, events[0], 2, { kind: 'manual' }, 'delivered'); // delivered stays delivered
  for (let number = 1; number <= 5; number++) await record(db, events[1], number, { kind: 'scheduled', number }, 'failed');
  await record(db, events[2], 1, { kind: 'scheduled', number: 1 }, 'failed');
  await record(db, events[2], 2, { kind: 'manual' }, 'failed'); // failed stays failed
  await record(db, events[3], 1, { kind: 'scheduled', number: 1 }, 'delivered');
  expect(await kept(db)).toEqual(new Map([['waiting', 3], ['delivered', 2], ['failed', 1], ['max_retries_reached', 1]]));
  expect(await kept(db)).toEqual(await recounted(db));

  // A resend delivers an event at max retries reached.
  await record(db, events[1], 6, { kind: 'manual' }, 'delivered');
  expect(await kept(db)).toEqual(new Map([['waiting', 3], ['delivered', 3], ['failed', 1]]));

  await db('webhook_events').whereIn('id', [events[0], events[1]]).update({ created_at: new Date('2025-01-01T00:00:00Z') });
  const purged = await deleteEndedEvents(db, { createdBefore: new Date('2025-02-01T00:00:00Z'), limit: 100, passedOver: [], runningAmong: async () => [] });
  expect(purged.events).toBe(2);
  expect(await kept(db)).toEqual(new Map([['waiting', 3], ['delivered', 1], ['failed', 1]]));
  expect(await kept(db)).toEqual(await recounted(db));
});

test('a TRUNCATE empties the counts, also one that reaches the events by CASCADE', async () => {
  const db = await databases.create();
  const endpoint = await insertEndpoint(db, { url: 'https://crm.example.org/hooks' });
  await insertEvent(db, endpoint);
  await db.raw('TRUNCATE webhook_events CASCADE');
  expect(await kept(db)).toEqual(new Map());
  await insertEvent(db, endpoint);
  await db.raw('TRUNCATE webhook_endpoints CASCADE');
  expect(await kept(db)).toEqual(new Map());
  await insertEvent(db, await insertEndpoint(db, { url: 'https://crm.example.org/hooks' }));
  expect(await kept(db)).toEqual(new Map([['waiting', 1]]));
});

test('30 events written at once and 30 attempts recorded at once are all counted, none failing', async () => {
  const db = await databases.create();
  const endpoint = await insertEndpoint(db, { url: 'https://crm.example.org/hooks' });
  const first = await Promise.all(Array.from({ length: 30 }, () => insertEvent(db, endpoint)));
  // Each recorded attempt moves its event from one status to another while 30 more events are written.
  const outcomes = await Promise.allSettled([
    ...first.map(({ id }, index) => record(db, id, 1, { kind: 'scheduled', number: 1 }, index % 3 === 0 ? 'failed' : 'delivered')),
    ...Array.from({ length: 30 }, () => insertEvent(db, endpoint)),
  ]);
  expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
  expect(await kept(db)).toEqual(new Map([['waiting', 30], ['delivered', 20], ['failed', 10]]));
  expect(await kept(db)).toEqual(await recounted(db));
});
