import { startTestApp, type TestApp } from '../support/test-app';

let app: TestApp;

beforeAll(async () => {
  app = await startTestApp();
});

afterAll(async () => {
  await app?.close();
});

test('/healthz answers ok over real HTTP once Postgres answers', async () => {
  const response = await app.anonymous.get('/healthz');
  expect(response.status).toBe(200);
  expect(await response.json()).toEqual({ status: 'ok' });
});

test('an unknown path is a JSON 404', async () => {
  const response = await app.anonymous.get('/nowhere');
  expect(response.status).toBe(404);
  expect(await response.json()).toEqual({ error: 'Not found', code: 'not_found' });
});
