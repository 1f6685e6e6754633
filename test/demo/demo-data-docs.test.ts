import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadConfig, projectRoot } from '../../src/config';
import { ensureDemoAdmin, ensureDemoNonStaffUser } from '../../src/demo/admin-user';
import { seedDemoData } from '../../src/demo/seed';
import { basicAuth, startTestApp, type TestApp } from '../support/test-app';

/*
 * docs/demo.md lists the demo data by id so that a first-time caller can find it; this keeps that list true, and
 * keeps the OpenAPI examples pointing at records the demo has.
 */

let app: TestApp;
let dataDir: string;

beforeAll(async () => {
  app = await startTestApp();
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'demo-data-'));
  await seedDemoData(app.db, app.config);
});

afterAll(async () => {
  await app?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** The rows of the Markdown table under a heading of docs/demo.md, cells trimmed, the header row left out. */
async function documentedTable(heading: string): Promise<string[][]> {
  const doc = await readFile(path.join(projectRoot, 'docs/demo.md'), 'utf8');
  const section = doc.slice(doc.indexOf(`### ${heading}`));
  const table = /\n((?:\|.*\|\n)+)/.exec(section)![1].trim().split('\n').slice(2);
  return table.map((row) => row.slice(1, -1).split('|').map((cell) => cell.trim().replace(/`/g, '')));
}

test('the documented contacts, campaigns and campaign links are the seeded ones', async () => {
  const contacts = await app.db('contacts').orderBy('id').select('id', 'first_name', 'last_name', 'environment', 'city');
  expect((await documentedTable('Contacts')).map(([id, name, environment, city]) => [id, name, environment, city])).toEqual(
    contacts.map((c) => [String(c.id), `${c.first_name} ${c.last_name}`, c.environment, c.city]),
  );
  const campaigns = await app.db('campaigns').orderBy('id').select('id', 'title');
  expect(await documentedTable('Campaigns')).toEqual(campaigns.map((c) => [String(c.id), c.title]));
  const links = await app.db('campaign_links').join('campaigns', 'campaigns.id', 'campaign_links.campaign_id').orderBy('campaign_links.id', 'desc')
    .select('campaign_links.id', 'campaigns.id as campaign_id', 'campaigns.title', 'campaign_links.active');
  expect((await documentedTable('Campaign links')).map(([id, campaign, active]) => [id, campaign, active])).toEqual(
    links.map((link) => [link.id, `${link.campaign_id} ${link.title}`, link.active ? 'yes' : 'no']),
  );
  for (const link of links) {
    const config = await app.request('GET', `/api/v2.1/campaign-links/${link.id}/config/`, undefined, {});
    expect([link.id, config.status]).toEqual([link.id, link.active ? 200 : 404]);
  }
});

test('the default TEST newsletter list is not empty: confirmed sign-ups in both environments', async () => {
  for (const [environment, emails] of [
    ['TEST', ['tina.test@example.ch']],
    ['PRODUCTION', ['anna.mueller@example.ch', 'marc.favre@example.ch', 'julia.meier@example.ch']],
  ] as const) {
    const page = await app.request('GET', `/api/v2.1/crm/newsletter-subscriptions/?environment=${environment}`);
    expect(page.body.results.map((entry: { email: string }) => entry.email).sort()).toEqual([...emails].sort());
  }
});

test('the demo accounts: a staff user and a non-staff user whose password is generated once and kept', async () => {
  const config = loadConfig({ DATA_DIR: dataDir });
  const admin = await ensureDemoAdmin(app.db, config);
  const viewer = await ensureDemoNonStaffUser(app.db, config);
  expect(await documentedTable('Accounts')).toEqual([
    [`${admin.username} (ADMIN_USERNAME)`, 'yes', expect.stringContaining('.data/admin-password.txt'), expect.any(String)],
    [viewer.username, 'no', expect.stringContaining('.data/viewer-password.txt'), expect.any(String)],
  ]);
  expect((await readFile(path.join(dataDir, 'viewer-password.txt'), 'utf8')).trim()).toBe(viewer.password);
  expect(await ensureDemoNonStaffUser(app.db, config)).toEqual(viewer);
  expect(viewer.password).not.toBe(admin.password);

  const donations = '/api/v2.1/crm/donations/?dateFrom=01-01-2025&dateTo=12-31-2025';
  expect((await app.request('GET', donations, undefined, { Authorization: basicAuth(admin.username, admin.password) })).status).toBe(200);
  const refused = await app.request('GET', donations, undefined, { Authorization: basicAuth(viewer.username, viewer.password) });
  expect(refused).toEqual({ status: 403, body: expect.objectContaining({ code: 'permission_denied' }) });
  const tokens = await app.request('POST', '/authentication/create', { username: viewer.username, password: viewer.password }, {});
  expect(tokens.status).toBe(200);
});

test('every example in the OpenAPI document answers 200 on the demo data', async () => {
  const document = (await app.request('GET', '/api/openapi.json', undefined, {})).body as {
    paths: Record<string, Record<string, { parameters?: { name: string; in: string; required?: boolean; schema: { example?: string } }[] }>>;
  };
  const called: string[] = [];
  for (const [template, operations] of Object.entries(document.paths)) {
    const operation = operations.get;
    if (!operation?.parameters?.some((parameter) => parameter.schema.example !== undefined)) continue;
    let url = template;
    const query = new URLSearchParams();
    for (const parameter of operation.parameters) {
      const example = parameter.schema.example;
      if (example === undefined) continue;
      if (parameter.in === 'path') url = url.replace(`{${parameter.name}}`, example);
      else query.set(parameter.name, example);
    }
    const response = await app.request('GET', `${url}?${query.toString()}`);
    expect([url, query.toString(), response.status]).toEqual([url, query.toString(), 200]);
    called.push(template);
  }
  expect(called).toEqual(expect.arrayContaining(['/api/v2.1/campaign-links/{id}/config/', '/api/v2.1/crm/contact/donations/']));
  const tina = await app.request('GET', '/api/v2.1/crm/contact/donations/?contactId=7');
  expect(tina.body).toHaveLength(2);
});
