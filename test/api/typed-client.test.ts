import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { projectRoot } from '../../src/config';
import { seedDemoData } from '../../src/demo/seed';
import { registerWebhookSchemas } from '../../src/webhooks/schemas/openapi';
import { STAFF, startTestApp, type TestApp } from '../support/test-app';
// The OpenAPI document, as the API serves it (the one line to repoint when the document moves).
import { documentedResponses as servedOpenApi } from '../support/documented-responses';

/*
 * The OpenAPI document proven usable by tools: TypeScript types generated from it with openapi-typescript, a small
 * client typed by them with openapi-fetch, compiled with the project's TypeScript, run against the test app. It calls
 * every read operation in every version (and the /crm-api alias) and reads fields through the generated types, so a
 * field missing from the document, or documented in a version that lacks it, fails the compilation.
 */

const run = promisify(execFile);
const ROOTS = ['/api/v1', '/api/v2', '/api/v2.1', '/crm-api'] as const;

/** The client, as an integrator would write it. `@ts-expect-error` lines prove the versions' types differ. */
const CLIENT = `
import createClient from 'openapi-fetch';
import type { paths } from './schema';

const [baseUrl, username, password] = process.argv.slice(2);

async function main() {
  const anonymous = createClient<paths>({ baseUrl });
  const tokens = await anonymous.POST('/authentication/create', { body: { username, password } });
  if (!tokens.data) throw new Error('sign-in failed: ' + tokens.response.status);
  const client = createClient<paths>({ baseUrl, headers: { Authorization: 'Bearer ' + tokens.data.access } });
  const period = { dateFrom: '01-01-2000', dateTo: '12-31-2099', environment: 'PRODUCTION' as const };
  const results: Record<string, unknown> = {};

  const v21 = await client.GET('/api/v2.1/crm/donations/', { params: { query: period } });
  results['v2.1 donations'] = { status: v21.response.status, checkout: v21.data?.[0]?.checkout.number, customFields: typeof v21.data?.[0]?.custom_fields };
  const v2 = await client.GET('/api/v2/crm/donations/', { params: { query: period } });
  // @ts-expect-error v2 entries have no checkout
  results['v2 donations'] = { status: v2.response.status, checkout: v2.data?.[0]?.checkout, customFields: typeof v2.data?.[0]?.custom_fields };
  const v1 = await client.GET('/api/v1/crm/donations/', { params: { query: period } });
  // @ts-expect-error v1 entries have no custom fields
  results['v1 donations'] = { status: v1.response.status, paymentType: v1.data?.[0]?.payment_type, customFields: v1.data?.[0]?.custom_fields };
  const crm = await client.GET('/crm-api/crm/donations/', { params: { query: period } });
  results['/crm-api donations'] = { status: crm.response.status, count: crm.data?.length };

  for (const [name, call] of [
    ['v1', () => client.GET('/api/v1/crm/contact/donations/', { params: { query: { contactId: 4, environment: 'PRODUCTION' } } })],
    ['v2', () => client.GET('/api/v2/crm/contact/donations/', { params: { query: { contactId: 4, environment: 'PRODUCTION' } } })],
    ['/crm-api', () => client.GET('/crm-api/crm/contact/donations/', { params: { query: { contactId: 4, environment: 'PRODUCTION' } } })],
  ] as const) {
    const { data, response } = await call();
    results[name + ' contact donations'] = { status: response.status, count: data?.length };
  }
  const checkouts = await client.GET('/api/v2.1/crm/contact/donations/', { params: { query: { contactId: 4, environment: 'PRODUCTION' } } });
  results['v2.1 contact donations'] = { status: checkouts.response.status, positions: checkouts.data?.map((entry) => entry.positions.length) };
  const unknown = await client.GET('/api/v2.1/crm/contact/donations/', { params: { query: { contactId: 424242 } } });
  results['v2.1 unknown contact'] = { status: unknown.response.status, error: unknown.error?.error };

  for (const root of ['/api/v1', '/api/v2', '/api/v2.1', '/crm-api'] as const) {
    const contacts = await client.GET(\`\${root}/crm/contacts/\`, { params: { query: { environment: 'PRODUCTION', page_size: 5 } } });
    results[root + ' contacts'] = { status: contacts.response.status, count: contacts.data?.count, firstDonations: contacts.data?.results[0]?.statistics.donation_count };
    const signUps = await client.GET(\`\${root}/crm/newsletter-subscriptions/\`, { params: { query: {} } });
    results[root + ' newsletter'] = { status: signUps.response.status, emails: signUps.data?.results.map((entry) => entry.email) };
    const link = await anonymous.GET(\`\${root}/campaign-links/{id}/config/\`, { params: { path: { id: 'wasser-fuer-alle' } } });
    results[root + ' campaign link'] = { status: link.response.status, defaultAmount: link.data?.default_amount, campaign: link.data?.campaign.title };
  }
  process.stdout.write(JSON.stringify(results));
}

main().catch((err: unknown) => {
  process.stderr.write(String(err) + '\\n');
  process.exit(1);
});
`;

/** A subscriber's handler typed by the generated webhook types; v1 and v2.1 differ where the versions do. */
const SUBSCRIBER = `
import type { webhooks } from './webhook-schema';

type Body<Name extends keyof webhooks> = NonNullable<webhooks[Name]['post']['requestBody']>['content']['application/json'];

export function positionsOf(envelope: Body<'v2.1/donation.completed'>): number[] {
  return envelope.data.donation.positions.map((position) => position.amount);
}

export function answersOf(envelope: Body<'v1/donation.completed'>): unknown {
  // @ts-expect-error v1 sends no custom fields
  return envelope.data.donation.donor.custom_fields;
}

export function payoutOf(envelope: Body<'v2/donation.reconciled'>): number {
  const environment: 'prod' | 'stage' | 'test' = envelope.environment;
  return environment === 'test' ? 0 : envelope.data.donation.payment.paid_out_amount;
}

export function optInOf(envelope: Body<'v2.1/newsletter.subscribed'>): true {
  return envelope.data.newsletter_subscription.opt_in;
}
`;

const TSCONFIG = {
  compilerOptions: {
    target: 'ES2022',
    lib: ['ES2022', 'DOM'],
    module: 'nodenext',
    moduleResolution: 'nodenext',
    strict: true,
    skipLibCheck: true,
    types: ['node'],
    typeRoots: [path.join(projectRoot, 'node_modules/@types')],
    outDir: 'out',
  },
  files: ['client.ts', 'subscriber.ts'],
};

let app: TestApp;
let dir: string;

beforeAll(async () => {
  app = await startTestApp();
  await seedDemoData(app.db, app.config);
  // Inside the project, so that the client resolves openapi-fetch from its node_modules.
  await mkdir(path.join(projectRoot, 'node_modules/.cache'), { recursive: true });
  dir = await mkdtemp(path.join(projectRoot, 'node_modules/.cache/typed-client-'));
});

afterAll(async () => {
  await app?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('types generated by openapi-typescript type a client that calls every read operation of every version, and a subscriber', async () => {
  const { document } = await servedOpenApi(app.baseUrl);
  await writeFile(path.join(dir, 'openapi.json'), JSON.stringify(document));
  await run(process.execPath, [require.resolve('openapi-typescript/bin/cli.js'), 'openapi.json', '--output', 'schema.ts'], { cwd: dir });
  await writeFile(path.join(dir, 'client.ts'), CLIENT);
  // The webhooks, registered as the served document will have them.
  const registry = new OpenAPIRegistry();
  registerWebhookSchemas(registry);
  const webhooksDocument = new OpenApiGeneratorV31(registry.definitions).generateDocument({ openapi: '3.1.0', info: { title: 'webhooks', version: '1' } });
  await writeFile(path.join(dir, 'webhooks.json'), JSON.stringify(webhooksDocument));
  await run(process.execPath, [require.resolve('openapi-typescript/bin/cli.js'), 'webhooks.json', '--output', 'webhook-schema.ts'], { cwd: dir });
  await writeFile(path.join(dir, 'subscriber.ts'), SUBSCRIBER);
  await writeFile(path.join(dir, 'tsconfig.json'), JSON.stringify(TSCONFIG));
  const tsc = path.join(projectRoot, 'node_modules/.bin/tsc');
  await run(tsc, ['-p', 'tsconfig.json'], { cwd: dir }).catch((err: { stdout: string }) => {
    throw new Error(`the typed client does not compile:\n${err.stdout}`);
  });

  const { stdout } = await run(process.execPath, [path.join(dir, 'out/client.js'), app.baseUrl, STAFF.username, STAFF.password], { cwd: dir });
  const results = JSON.parse(stdout);
  expect(Object.keys(results)).toHaveLength(4 + 4 + 1 + 12);
  expect(results).toMatchObject({
    'v2.1 donations': { status: 200, checkout: expect.any(String), customFields: 'object' },
    'v2 donations': { status: 200, customFields: 'object' },
    'v1 donations': { status: 200, paymentType: 'single' },
    '/crm-api donations': { status: 200, count: expect.any(Number) },
    'v1 contact donations': { status: 200, count: 4 },
    'v2 contact donations': { status: 200, count: 4 },
    '/crm-api contact donations': { status: 200, count: 4 },
    'v2.1 contact donations': { status: 200, positions: [3, 1] },
    'v2.1 unknown contact': { status: 404, error: 'Contact not found' },
  });
  expect(results['v2 donations'].checkout).toBeUndefined();
  expect(results['v1 donations'].customFields).toBeUndefined();
  for (const root of ROOTS) {
    expect(results[`${root} contacts`]).toEqual({ status: 200, count: 8, firstDonations: expect.any(Number) });
    expect(results[`${root} newsletter`]).toEqual({ status: 200, emails: ['tina.test@example.ch'] });
    expect(results[`${root} campaign link`]).toEqual({ status: 200, defaultAmount: 50, campaign: 'Wasser für alle' });
  }
}, 120_000);
