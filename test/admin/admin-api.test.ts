import { documentedResponses } from '../support/documented-responses';
import { startTestApp, type TestApp } from '../support/test-app';
import { PRODUCTION_ENV } from '../support/production-env';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({ PLATFORM_CART_LOGIC: 'false' });
});

afterAll(async () => {
  await app?.close();
});

const endpoint = (body?: unknown) => (body === undefined ? app.request('GET', '/admin/api/webhook-endpoint') : app.request('PUT', '/admin/api/webhook-endpoint', body));

describe('webhook endpoint configuration', () => {
  test('before anything is saved, the defaults of a new endpoint are shown', async () => {
    const response = await endpoint();
    expect(response).toEqual({
      status: 200,
      body: {
        configured: false,
        url: null,
        active: true,
        payload_version: 'v1',
        events: ['donation.completed', 'donation.recurring_completed', 'shop_order.completed'],
        basic_auth_username: null,
        basic_auth_password_set: false,
        signing_secret_set: false,
        created_at: null,
        updated_at: null,
      },
    });
  });

  test('saving stores the settings; password and signing secret are never returned', async () => {
    const saved = await endpoint({
      url: 'https://crm.example.org/hooks',
      events: ['newsletter.subscribed', 'donation.completed', 'donation.reconciled'],
      basic_auth_username: 'crm',
      basic_auth_password: 'very-secret-password',
      signing_secret: 'whsec_c2VjcmV0LXNpZ25pbmcta2V5LW9mLTI0LWJ5dGVz',
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toEqual({
      configured: true,
      url: 'https://crm.example.org/hooks',
      active: true,
      payload_version: 'v1',
      events: ['donation.completed', 'donation.reconciled', 'newsletter.subscribed'],
      basic_auth_username: 'crm',
      basic_auth_password_set: true,
      signing_secret_set: true,
      created_at: '2025-07-15T10:30:00Z',
      updated_at: '2025-07-15T10:30:00Z',
    });
    const shown = await endpoint();
    expect(shown.body).toEqual(saved.body);
    for (const response of [saved, shown]) {
      const text = JSON.stringify(response.body);
      expect(text).not.toContain('very-secret-password');
      expect(text).not.toContain('whsec_');
    }
    // Stored encrypted (test/secrets/secrets-at-rest.test.ts), for the deliveries to open.
    expect(await app.db('webhook_endpoints').first('basic_auth_password', 'signing_secret')).toEqual({
      basic_auth_password: expect.stringMatching(/^enc:v1:/),
      signing_secret: expect.stringMatching(/^enc:v1:/),
    });
  });

  test('an edit that leaves out the credentials keeps them; null removes them; still one endpoint', async () => {
    app.clock.now += 60;
    const edited = await endpoint({ active: false, url: 'https://crm.example.org/v2/hooks' });
    expect(edited.body).toMatchObject({ active: false, basic_auth_password_set: true, signing_secret_set: true, updated_at: '2025-07-15T10:31:00Z' });
    const cleared = await endpoint({ basic_auth_username: null, basic_auth_password: null, signing_secret: null });
    expect(cleared.body).toMatchObject({ basic_auth_username: null, basic_auth_password_set: false, signing_secret_set: false });
    expect(await app.db('webhook_endpoints').count('* as n')).toEqual([{ n: 1 }]);
  });

  test('v2.1 is refused while the cart logic is off', async () => {
    const response = await endpoint({ payload_version: 'v2.1' });
    expect(response.status).toBe(400);
    expect(response.body.error).toMatch(/payload_version: v2.1 can only be chosen when the cart logic/);
    expect((await endpoint({ payload_version: 'v2' })).body.payload_version).toBe('v2');
  });

  test('invalid settings are 400s and change nothing', async () => {
    const before = (await endpoint()).body;
    const cases: [unknown, RegExp][] = [
      [{ url: 'http://crm.example.org/hooks' }, /url: must use https/],
      [{ url: 'https://user:pw@crm.example.org/' }, /url: must not contain credentials/],
      [{ events: ['donation.refunded'] }, /events.0/],
      [{ active: 'yes' }, /active/],
      [{ payload_version: 'v3' }, /payload_version/],
      [{ basic_auth_username: 'crm' }, /set both or neither/],
      [{ basic_auth_username: 'a:b', basic_auth_password: 'x' }, /must not contain a colon/],
      [{ signing_secret: 'short' }, /signing_secret/],
      [{ signing_secret: 'long-enough-but-\u0000-nul' }, /signing_secret/],
      [{ url: 'https://crm.example.org/\u0000' }, /url/],
    ];
    for (const [body, message] of cases) {
      const response = await endpoint(body);
      expect([body, response.status, response.body.error]).toEqual([body, 400, expect.stringMatching(message)]);
    }
    expect((await endpoint()).body).toEqual(before);
  });

  test('a signing secret whose key is empty or shorter than 24 bytes is refused, naming the field', async () => {
    const before = (await endpoint()).body;
    for (const secret of [
      'whsec_=================', // base64 of nothing: every attempt failed inside signing, retried forever
      `whsec_${'!'.repeat(40)}`,
      'whsec_c2VjcmV0LWtleQ==', // 10 bytes
      `whsec_${Buffer.alloc(23).toString('base64')}`,
      'plain-secret-23-bytes!!',
    ]) {
      const response = await endpoint({ signing_secret: secret });
      expect([secret, response.status, response.body.code, response.body.problems]).toEqual([
        secret,
        400,
        'invalid_body',
        [{ in: 'body', name: 'signing_secret', message: expect.stringMatching(/standard base64|at least 24 bytes/) }],
      ]);
      expect(response.body.error).toMatch(/^signing_secret: /);
    }
    expect((await endpoint()).body).toEqual(before);
    const accepted = await endpoint({ signing_secret: `whsec_${Buffer.alloc(24, 1).toString('base64')}` });
    expect(accepted.body).toMatchObject({ signing_secret_set: true });
  });

  test('a URL is stored as the parser normalises it; what the parser would change unseen is a 400 naming url', async () => {
    const saved = await endpoint({ url: ' HTTPS://CRM.Example.ORG:443/a/../hooks ' });
    expect(saved.body.url).toBe('https://crm.example.org/hooks');
    expect(await app.db('webhook_endpoints').first('url')).toEqual({ url: 'https://crm.example.org/hooks' });
    for (const url of [
      'https://crm.example.org/hooks\r\nX-Injected: 1',
      '\thttps://crm.example.org/hooks',
      'https://crm.example.org/ho\toks',
      'https://crm.example.org\\@127.0.0.1/',
      'https:8.8.8.8/',
      'https:///crm.example.org/hooks',
      'https://@crm.example.org/hooks',
      'https://crm.example.org:0/hooks',
    ]) {
      const response = await endpoint({ url });
      expect([url, response.status, response.body.code, response.body.problems]).toEqual([
        url,
        400,
        'invalid_body',
        [{ in: 'body', name: 'url', message: expect.any(String) }],
      ]);
    }
    expect((await endpoint()).body.url).toBe('https://crm.example.org/hooks');
  });

  test('plain http to loopback is fine in development', async () => {
    expect((await endpoint({ url: 'http://127.0.0.1:4567/hooks' })).status).toBe(200);
  });

  test('staff only', async () => {
    expect((await app.request('GET', '/admin/api/webhook-endpoint', undefined, {})).status).toBe(401);
    expect((await app.request('GET', '/admin/api/webhook-endpoint', undefined, app.nonStaff())).status).toBe(403);
  });
});

describe('production rules', () => {
  let production: TestApp;
  beforeAll(async () => {
    production = await startTestApp({ ...PRODUCTION_ENV });
  });
  afterAll(async () => {
    await production?.close();
  });

  test('http and private addresses are refused; v2.1 is allowed with the cart logic on', async () => {
    const put = (body: unknown) => production.request('PUT', '/admin/api/webhook-endpoint', body);
    expect((await put({ url: 'http://127.0.0.1:4567/hooks' })).body.error).toMatch(/must use https/);
    expect((await put({ url: 'https://10.0.0.8/hooks' })).body.error).toMatch(/must point to a public/);
    expect((await put({ url: 'https://crm.example.org/hooks', payload_version: 'v2.1' })).body).toMatchObject({ payload_version: 'v2.1' });
  });
});

describe('webhook events', () => {
  let ids: number[];

  beforeAll(async () => {
    const [{ id: endpointId }] = await app.db('webhook_endpoints').select('id');
    const rows = [
      { event_type: 'donation.completed', status: 'delivered', attempts: 1, last_response_code: 200, delivered_at: new Date('2025-07-15T10:30:02Z') },
      { event_type: 'donation.completed', status: 'failed', attempts: 2, last_response_code: 500, last_response_body: 'oops', next_attempt_at: new Date('2025-07-15T10:50:00Z') },
      { event_type: 'newsletter.subscribed', status: 'waiting', attempts: 0 },
      { event_type: 'shop_order.completed', status: 'max_retries_reached', attempts: 5, last_response_code: 404 },
    ];
    ids = [];
    for (const [index, row] of rows.entries()) {
      const [{ id }] = await app.db('webhook_events')
        .insert({
          endpoint_id: endpointId,
          payload_version: 'v2',
          source_key: `test:${index}`,
          payload: JSON.stringify({ id: index, event: row.event_type, data: { n: index } }),
          created_at: new Date(Date.UTC(2025, 6, 15, 10, index)),
          ...row,
        })
        .returning('id');
      ids.push(id);
    }
    await app.db('webhook_delivery_attempts').insert([
      { event_id: ids[1], number: 1, started_at: new Date('2025-07-15T10:31:00Z'), duration_ms: 120, response_code: 500, response_body: 'oops', outcome: 'failed' },
      { event_id: ids[1], number: 2, started_at: new Date('2025-07-15T10:36:00Z'), duration_ms: 30000, error: 'timeout after 30 s', outcome: 'failed' },
    ]);
  });

  test('the list is newest first with German status labels', async () => {
    const response = await app.request('GET', '/admin/api/webhook-events');
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ count: 4, next: null, previous: null });
    expect(response.body.results.map((e: { id: number }) => e.id)).toEqual([...ids].reverse());
    expect(response.body.results.map((e: { status_label: string }) => e.status_label)).toEqual([
      'Maximale Wiederholungen erreicht',
      'Wartend',
      'Fehlgeschlagen',
      'Zugestellt',
    ]);
    expect(response.body.results[2]).toEqual({
      id: ids[1],
      event: 'donation.completed',
      created_at: '2025-07-15T10:01:00Z',
      status: 'failed',
      status_label: 'Fehlgeschlagen',
      attempts: 2,
      interrupted_attempts: 0,
      last_response_code: 500,
      last_response_body: 'oops',
      next_attempt_at: '2025-07-15T10:50:00Z',
      delivered_at: null,
      test: false,
      stuck: false,
    });
  });

  test('filters by status and by event type, and pages with absolute links', async () => {
    const failed = await app.request('GET', '/admin/api/webhook-events?status=failed');
    expect(failed.body.results.map((e: { id: number }) => e.id)).toEqual([ids[1]]);
    const donations = await app.request('GET', '/admin/api/webhook-events?event=donation.completed&status=delivered');
    expect(donations.body.results.map((e: { id: number }) => e.id)).toEqual([ids[0]]);

    const first = await app.request('GET', '/admin/api/webhook-events?page_size=3');
    expect(first.body).toMatchObject({ count: 4, previous: null, next: `${app.linkOrigin}/admin/api/webhook-events?page_size=3&page=2` });
    const second = await app.request('GET', '/admin/api/webhook-events?page_size=3&page=2');
    expect(second.body.results).toHaveLength(1);
    expect(second.body.previous).toBe(`${app.linkOrigin}/admin/api/webhook-events?page_size=3&page=1`);
    expect((await app.request('GET', '/admin/api/webhook-events?page_size=3&page=3')).status).toBe(404);
  });

  test('bad filters are 400s naming the parameter', async () => {
    for (const [query, name] of [
      ['status=Wartend', 'status'],
      ['event=donation.refunded', 'event'],
      ['page=0', 'page'],
      ['page_size=1001', 'page_size'],
      ['page=abc', 'page'],
      ['page=01', 'page'],
      ['page_size=05', 'page_size'],
    ]) {
      const response = await app.request('GET', `/admin/api/webhook-events?${query}`);
      expect([query, response.status, response.body.error]).toEqual([query, 400, expect.stringMatching(new RegExp(`^${name} `))]);
    }
  });

  test('one event with its stored payload and every attempt', async () => {
    const response = await app.request('GET', `/admin/api/webhook-events/${ids[1]}`);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: ids[1],
      status_label: 'Fehlgeschlagen',
      payload_version: 'v2',
      payload: { id: 1, event: 'donation.completed', data: { n: 1 } },
      delivery_attempts: [
        { number: 1, manual: false, started_at: '2025-07-15T10:31:00Z', duration_ms: 120, outcome: 'failed', response_code: 500, response_body: 'oops', error: null },
        { number: 2, manual: false, started_at: '2025-07-15T10:36:00Z', duration_ms: 30000, outcome: 'failed', response_code: null, response_body: null, error: 'timeout after 30 s' },
      ],
    });
    // The workflow id stored with the event: its id and a short part of its own random key.
    const { uuid } = await app.db('webhook_events').where({ id: ids[1] }).first('uuid');
    expect(response.body.workflow_id).toBe(`webhook-event-${ids[1]}-${uuid.slice(0, 8)}`);
    expect((await app.request('GET', '/admin/api/webhook-events/999999')).status).toBe(404);
    // One id rule for the detail and the resend: 0 is no event id, a 400 like any other malformed id.
    for (const id of ['abc', '0', '007', '9999999999999999']) {
      const malformed = await app.request('GET', `/admin/api/webhook-events/${id}`);
      expect(malformed.status).toBe(400);
      expect(malformed.body).toMatchObject({ code: 'invalid_parameter', problems: [expect.objectContaining({ in: 'path', name: 'id' })] });
    }
  });

  test('attempts started without an outcome: interrupted where a worker was lost, under way for the newest start of an open number', async () => {
    // Event 1 (failed after attempts 1 and 2): attempt 1 ran twice, the first run lost; attempt 3 ran, was lost, and runs again.
    await app.db('webhook_attempt_starts').insert([
      { event_id: ids[1], number: 1, manual: false, started_at: new Date('2025-07-15T10:30:40Z') },
      { event_id: ids[1], number: 3, manual: true, started_at: new Date('2025-07-15T10:40:00Z') },
      { event_id: ids[1], number: 3, manual: true, started_at: new Date('2025-07-15T10:40:20Z') },
    ]);
    try {
      const documented = await documentedResponses(app.baseUrl);
      const detail = await app.request('GET', `/admin/api/webhook-events/${ids[1]}`);
      expect(documented.errors('get', '/admin/api/webhook-events/{id}', 200, detail.body)).toEqual([]);
      const unknown = { duration_ms: null, outcome: null, response_code: null, response_body: null, error: null };
      expect(detail.body).toMatchObject({
        attempts: 2,
        interrupted_attempts: 2,
        delivery_attempts: [
          { number: 1, manual: false, started_at: '2025-07-15T10:30:40Z', ...unknown, interrupted: true },
          { number: 1, started_at: '2025-07-15T10:31:00Z', outcome: 'failed', interrupted: false },
          { number: 2, started_at: '2025-07-15T10:36:00Z', outcome: 'failed', interrupted: false },
          { number: 3, manual: true, started_at: '2025-07-15T10:40:00Z', ...unknown, interrupted: true },
          { number: 3, manual: true, started_at: '2025-07-15T10:40:20Z', ...unknown, interrupted: false },
        ],
      });
      const list = await app.request('GET', '/admin/api/webhook-events');
      expect(documented.errors('get', '/admin/api/webhook-events', 200, list.body)).toEqual([]);
      expect(list.body.results.map((e: { interrupted_attempts: number }) => e.interrupted_attempts)).toEqual([0, 0, 2, 0]);
    } finally {
      await app.db('webhook_attempt_starts').delete();
    }
  });

  test('a stored payload that is not JSON is shown as the text it is, not a 500', async () => {
    const [{ id: endpointId }] = await app.db('webhook_endpoints').select('id');
    const stored = ['{"id": 7, "event": "donation.completed", "data": {', 'not json at all', ''];
    for (const [index, payload] of stored.entries()) {
      const [{ id }] = await app.db('webhook_events')
        .insert({ endpoint_id: endpointId, event_type: 'donation.completed', payload_version: 'v2', source_key: `broken:${index}`, payload })
        .returning('id');
      const response = await app.request('GET', `/admin/api/webhook-events/${id}`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ id, payload, payload_is_json: false });
      await app.db('webhook_events').where({ id }).delete();
    }
    const parsed = await app.request('GET', `/admin/api/webhook-events/${ids[1]}`);
    expect(parsed.body).toMatchObject({ payload: { id: 1 }, payload_is_json: true });
  });

  test('staff only', async () => {
    expect((await app.request('GET', '/admin/api/webhook-events', undefined, {})).status).toBe(401);
    expect((await app.request('GET', `/admin/api/webhook-events/${ids[0]}`, undefined, app.nonStaff())).status).toBe(403);
  });
});

describe('what the admin page needs to know', () => {
  test('the signed-in user, the filter and form choices, and where the Temporal UI is', async () => {
    const response = await app.request('GET', '/admin/api/info');
    expect(response).toEqual({
      status: 200,
      body: {
        username: 'staff',
        // No TEMPORAL_UI_URL and no TEMPORAL_ADDRESS: this process starts the dev server, whose UI it names.
        temporal_ui_url: `http://127.0.0.1:${app.config.temporal.uiPort}`,
        temporal_namespace: 'default',
        temporal_task_queue: app.config.temporal.taskQueue,
        // This database's installation (migration 020), which its workers and workflows name.
        installation_id: (await app.db('installation').first('id')).id,
        statuses: [
          { value: 'waiting', label: 'Wartend' },
          { value: 'delivered', label: 'Zugestellt' },
          { value: 'failed', label: 'Fehlgeschlagen' },
          { value: 'max_retries_reached', label: 'Maximale Wiederholungen erreicht' },
        ],
        stuck_after_minutes: 15,
        event_types: ['donation.completed', 'donation.recurring_completed', 'donation.reconciled', 'newsletter.subscribed', 'shop_order.completed'],
        // The cart logic is off in this app.
        payload_versions: [
          { value: 'v1', selectable: true },
          { value: 'v2', selectable: true },
          { value: 'v2.1', selectable: false },
        ],
      },
    });
    expect((await app.request('GET', '/admin/api/info', undefined, {})).status).toBe(401);
    expect((await app.request('GET', '/admin/api/info', undefined, app.nonStaff())).status).toBe(403);
  });

  test('TEMPORAL_UI_URL wins; with an external Temporal and no UI address there is no link', async () => {
    for (const [env, expected] of [
      [{ TEMPORAL_UI_URL: 'https://temporal.example.org/', TEMPORAL_NAMESPACE: 'donations' }, ['https://temporal.example.org', 'donations']],
      [{ TEMPORAL_ADDRESS: 'temporal:7233' }, [null, 'default']],
    ] as const) {
      const other = await startTestApp(env);
      try {
        const { body } = await other.request('GET', '/admin/api/info');
        expect([body.temporal_ui_url, body.temporal_namespace]).toEqual(expected);
      } finally {
        await other.close();
      }
    }
  });
});
