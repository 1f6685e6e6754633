import { isStuck, type StuckFacts } from '../../src/delivery-rules/stuck-events';
import type { WebhookEventRow } from '../../src/webhook-events/tables';
import { startTestApp, TEST_APP_TIME, type TestApp } from '../support/test-app';
import { insertEndpoint, insertEvent } from '../support/webhook-rows';

// An event that should have moved on and has not is shown as stuck: the admin API (flag and filter) and the metric
// read the same rule (src/delivery-rules/stuck-events.ts), the filter and the metric in SQL, the flag in TypeScript.

const now = Date.parse(TEST_APP_TIME);
const minutesAgo = (minutes: number) => new Date(now - minutes * 60_000);

type Row = Pick<WebhookEventRow, 'status' | 'attempts' | 'created_at' | 'workflow_started_at' | 'next_attempt_at'>;
const waiting = { status: 'waiting', attempts: 0, workflow_started_at: null, next_attempt_at: null } as const;
const failed = { status: 'failed', attempts: 2, workflow_started_at: minutesAgo(120) } as const;

/** Events in every state around the limit of 15 minutes, by name. */
const CASES: Record<string, Row> = {
  'queued 16 min ago, never started': { ...waiting, created_at: minutesAgo(16) },
  'queued 14 min ago, never started': { ...waiting, created_at: minutesAgo(14) },
  'queued exactly 15 min ago': { ...waiting, created_at: minutesAgo(15) },
  'started 16 min ago, no attempt': { ...waiting, created_at: minutesAgo(30), workflow_started_at: minutesAgo(16) },
  'created 30 min ago, started 5 min ago, no attempt': { ...waiting, created_at: minutesAgo(30), workflow_started_at: minutesAgo(5) },
  'failed, next attempt 16 min overdue': { ...failed, created_at: minutesAgo(120), next_attempt_at: minutesAgo(16) },
  'failed, next attempt 14 min overdue': { ...failed, created_at: minutesAgo(120), next_attempt_at: minutesAgo(14) },
  'failed, next attempt in an hour': { ...failed, created_at: minutesAgo(120), next_attempt_at: minutesAgo(-60) },
  'failed, no attempt scheduled': { ...failed, created_at: minutesAgo(120), next_attempt_at: null },
  'delivered two hours ago': { ...failed, status: 'delivered', attempts: 1, created_at: minutesAgo(120), next_attempt_at: null },
  'gave up two days ago': { ...failed, status: 'max_retries_reached', attempts: 5, created_at: minutesAgo(3000), next_attempt_at: null },
};

const factsOf = (row: Row): StuckFacts => ({
  status: row.status,
  attempts: row.attempts,
  createdAt: row.created_at,
  workflowStartedAt: row.workflow_started_at,
  nextAttemptAt: row.next_attempt_at,
});

async function appWithCases(env: NodeJS.ProcessEnv = {}) {
  const app = await startTestApp(env);
  const endpointId = await insertEndpoint(app.db, { url: 'https://crm.example.org/hooks' });
  const ids: Record<string, number> = {};
  for (const [name, row] of Object.entries(CASES)) {
    const { id } = await insertEvent(app.db, endpointId);
    await app.db('webhook_events').where({ id }).update(row);
    ids[name] = id;
  }
  return { app, ids };
}

const ascending = (numbers: number[]) => [...numbers].sort((a, b) => a - b);
const expectedStuck = (ids: Record<string, number>, minutes: number) =>
  ascending(
    Object.entries(CASES)
      .filter(([, row]) => isStuck(factsOf(row), new Date(now), minutes))
      .map(([name]) => ids[name]),
  );
const idsOf = (results: Array<{ id: number }>) => ascending(results.map((event) => event.id));

async function scrape(app: TestApp): Promise<string> {
  return (await fetch(`${app.baseUrl}/metrics`)).text();
}

describe('with the default limit of 15 minutes', () => {
  let app: TestApp;
  let ids: Record<string, number>;

  beforeAll(async () => {
    ({ app, ids } = await appWithCases());
  });

  afterAll(async () => {
    await app?.close();
  });

  test('the rule picks exactly the events that should have moved on', () => {
    expect(expectedStuck(ids, 15)).toEqual(
      ascending(['queued 16 min ago, never started', 'started 16 min ago, no attempt', 'failed, next attempt 16 min overdue'].map((name) => ids[name])),
    );
  });

  test('the list flags each event by the rule, and stuck=true lists exactly those (the SQL form agrees)', async () => {
    const all = await app.request('GET', '/admin/api/webhook-events');
    expect(all.status).toBe(200);
    for (const [name, id] of Object.entries(ids)) {
      const shown = all.body.results.find((event: { id: number }) => event.id === id);
      expect([name, shown.stuck]).toEqual([name, isStuck(factsOf(CASES[name]), new Date(now), 15)]);
      // The spec's four statuses stay as they are: stuck is a flag beside the status.
      expect(shown.status).toBe(CASES[name].status);
    }
    const stuck = await app.request('GET', '/admin/api/webhook-events?stuck=true');
    expect(stuck.body.count).toBe(3);
    expect(idsOf(stuck.body.results)).toEqual(expectedStuck(ids, 15));
    const stuckAndFailed = await app.request('GET', '/admin/api/webhook-events?stuck=true&status=failed');
    expect(stuckAndFailed.body.results.map((event: { id: number }) => event.id)).toEqual([ids['failed, next attempt 16 min overdue']]);
  });

  test('the detail says so too', async () => {
    const detail = await app.request('GET', `/admin/api/webhook-events/${ids['started 16 min ago, no attempt']}`);
    expect(detail.body).toMatchObject({ status: 'waiting', status_label: 'Wartend', attempts: 0, stuck: true });
    expect((await app.request('GET', `/admin/api/webhook-events/${ids['failed, next attempt in an hour']}`)).body.stuck).toBe(false);
  });

  test('the metric counts them per status, computed at scrape', async () => {
    const text = await scrape(app);
    expect(text).toContain('webhook_events_stuck{status="waiting"} 2');
    expect(text).toContain('webhook_events_stuck{status="failed"} 1');
    // An hour later every waiting event is stuck, and so is the failed one 14 minutes overdue; the one due in an hour
    // is due just now, not overdue.
    app.clock.now += 60 * 60;
    try {
      const later = await scrape(app);
      expect(later).toContain('webhook_events_stuck{status="waiting"} 5');
      expect(later).toContain('webhook_events_stuck{status="failed"} 2');
      expect((await app.request('GET', '/admin/api/webhook-events?stuck=true')).body.count).toBe(7);
    } finally {
      app.clock.now -= 60 * 60;
    }
  });

  test('stuck takes only true', async () => {
    const response = await app.request('GET', '/admin/api/webhook-events?stuck=yes');
    expect(response).toMatchObject({ status: 400, body: { code: 'invalid_parameter', problems: [{ in: 'query', name: 'stuck' }] } });
  });
});

test('DELIVERY_STUCK_AFTER_MINUTES sets the limit', async () => {
  const { app, ids } = await appWithCases({ DELIVERY_STUCK_AFTER_MINUTES: '10' });
  try {
    const stuck = await app.request('GET', '/admin/api/webhook-events?stuck=true');
    expect(idsOf(stuck.body.results)).toEqual(expectedStuck(ids, 10));
    expect(stuck.body.count).toBe(6);
    expect((await app.request('GET', '/admin/api/info')).body.stuck_after_minutes).toBe(10);
    expect(await scrape(app)).toMatch(/# HELP webhook_events_stuck .* for more than 10 minutes \(DELIVERY_STUCK_AFTER_MINUTES\)/);
  } finally {
    await app.close();
  }
});
