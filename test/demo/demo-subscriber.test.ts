import { startSubscriber } from '../../src/demo/subscriber-server';
import { startTestSubscriber, type TestSubscriber } from '../../src/demo/test-subscriber';
import { signatureHeaders } from '../../src/webhooks/signature';
import { eventually } from '../support/eventually';

let subscriber: TestSubscriber;
let lines: string[];

async function start(options: Parameters<typeof startTestSubscriber>[0] = {}) {
  lines = [];
  subscriber = await startTestSubscriber({ port: 0, print: (line) => lines.push(line), ...options });
}

afterEach(async () => {
  await subscriber?.close();
});

const envelope = (id: number, event = 'donation.completed') => JSON.stringify({ id, event, created_at: '2025-07-15T10:30:00Z', environment: 'prod', data: {} });

async function deliver(id: number, headers: Record<string, string> = {}, body = envelope(id)) {
  const response = await fetch(subscriber.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body,
    redirect: 'manual',
  });
  return { status: response.status, body: await response.text(), location: response.headers.get('location') };
}

async function control(body: unknown) {
  const response = await fetch(subscriber.controlUrl, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

test('ok answers 200 and prints one line per delivery, marking a repeated id as a duplicate', async () => {
  await start();
  expect(subscriber.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/webhooks$/);
  expect((await deliver(7)).status).toBe(200);
  expect((await deliver(7)).status).toBe(200);
  expect((await deliver(8, {}, envelope(8, 'shop_order.completed'))).status).toBe(200);
  expect(lines).toEqual([
    expect.stringMatching(/#7 .*donation\.completed .*seen 1x {2}-> 200$/),
    expect.stringMatching(/#7 .*seen 2x {2}DUPLICATE {2}-> 200$/),
    expect.stringMatching(/#8 .*shop_order\.completed .*seen 1x {2}-> 200$/),
  ]);
});

test('fail answers 500, and a later success after failures is no duplicate', async () => {
  await start({ settings: { mode: 'fail' } });
  expect(await deliver(1)).toMatchObject({ status: 500 });
  await subscriber.change({ mode: 'ok' });
  expect(await deliver(1)).toMatchObject({ status: 200 });
  expect(lines.at(-1)).toMatch(/seen 2x {2}-> 200$/);
});

test('flaky fails the first N attempts of each event id, then answers 200', async () => {
  await start({ settings: { mode: 'flaky', failures: 2 } });
  const statuses = [];
  for (const id of [1, 1, 2, 1, 2, 2]) statuses.push((await deliver(id)).status);
  expect(statuses).toEqual([500, 500, 500, 200, 500, 200]);
});

test('slow answers only after its delay', async () => {
  await start();
  const answer = await control({ mode: 'slow', delay_seconds: 0.2 });
  expect(answer).toEqual({ status: 200, body: expect.objectContaining({ mode: 'slow', delay_seconds: 0.2 }) });
  const started = Date.now();
  expect((await deliver(3)).status).toBe(200);
  expect(Date.now() - started).toBeGreaterThanOrEqual(190);
  expect(lines.at(-1)).toMatch(/-> 200 after 0.2 s$/);
});

test('redirect answers 302 with a Location', async () => {
  await start({ settings: { mode: 'redirect' } });
  expect(await deliver(4)).toMatchObject({ status: 302, location: '/elsewhere' });
});

test('refuse closes the listener, then comes back on the same port in the previous mode', async () => {
  await start({ settings: { mode: 'flaky', failures: 1 } });
  expect((await control({ mode: 'refuse', refuse_seconds: 0.3 })).status).toBe(200);
  await eventually(() => deliver(5).then(() => false, (err: Error & { cause?: { code?: string } }) => err.cause?.code === 'ECONNREFUSED'), {
    what: 'connections refused',
  });
  // Back after its time, still flaky: the first attempt of a new id fails.
  const back = await eventually(() => deliver(6).catch(() => undefined), { what: 'the subscriber back' });
  expect(back.status).toBe(500);
  expect(subscriber.settings().mode).toBe('flaky');
  expect(lines).toContainEqual(expect.stringMatching(/refusing connections for 0.3 s$/));
});

test('a change while refusing ends the outage at once', async () => {
  await start();
  await subscriber.change({ mode: 'refuse', refuse_seconds: 600 });
  await expect(deliver(1)).rejects.toThrow();
  await subscriber.change({ mode: 'fail' });
  expect((await deliver(1)).status).toBe(500);
});

test('with the secret, signed deliveries pass and anything else is refused with 401', async () => {
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const nowMs = Date.parse('2025-07-15T10:30:00Z');
  await start({ secret, nowMs: () => nowMs });
  const body = envelope(9);
  const signed = signatureHeaders({ messageId: '9', timestampSeconds: nowMs / 1000, body, secret });
  expect((await deliver(9, signed, body)).status).toBe(200);
  expect(lines.at(-1)).toMatch(/signature valid$/);
  expect((await deliver(9, signed, body.replace('prod', 'test'))).status).toBe(401);
  expect((await deliver(10)).status).toBe(401);
  expect(lines.at(-1)).toMatch(/-> 401 {2}signature missing$/);
});

test('the control endpoint shows the state and refuses bad changes', async () => {
  await start();
  expect(await (await fetch(subscriber.controlUrl)).json()).toEqual({ mode: 'ok', failures: 1, delay_seconds: 35, refuse_seconds: 60, events_seen: 0 });
  expect(await control({ mode: 'sleepy' })).toMatchObject({ status: 400, body: { error: expect.stringContaining('mode') } });
  expect(await control({ mode: 'flaky', failures: -1 })).toMatchObject({ status: 400 });
  expect(subscriber.settings().mode).toBe('ok');
});

test('the subscriber server answers 500 with the message when its reply function throws, and keeps serving', async () => {
  const broken = await startSubscriber({
    reply: (request) => {
      if (request.index === 0) throw new Error('reply function broke');
      return { status: 204 };
    },
  });
  try {
    const first = await fetch(broken.url, { method: 'POST', body: '{}' });
    expect({ status: first.status, body: await first.text() }).toEqual({ status: 500, body: 'reply function broke' });
    expect((await fetch(broken.url, { method: 'POST', body: '{}' })).status).toBe(204);
  } finally {
    await broken.close();
  }
});
