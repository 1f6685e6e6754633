import { execFile } from 'node:child_process';
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { loadConfig, projectRoot } from '../../src/config';
import type { PayloadVersion } from '../../src/webhooks/payload-versions';
import { seedDemoData } from '../../src/demo/seed';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../../src/webhooks/event-types';
import { PAYLOAD_VERSIONS } from '../../src/webhooks/payload-versions';
import { findWebhookSchema, webhookSchemaPath, webhookSchemas } from '../../src/webhooks/schemas/catalogue';
import { registerWebhookSchemas } from '../../src/webhooks/schemas/openapi';
import { createTestDatabase } from '../support/database';
import { presentedDonor } from '../support/platform-donor';
import { insertEndpoint, insertEvent, saveEndpointForEveryEvent } from '../support/webhook-rows';

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
const jsonSchemaValidators = new Map(
  webhookSchemas().map((entry) => [`${entry.version} ${entry.event}`, ajv.compile(entry.jsonSchema())]),
);

/** Errors of a payload by the zod schema and by the served JSON Schema; both must agree. */
function errorsOf(version: PayloadVersion, event: WebhookEventType, payload: unknown) {
  const zod = findWebhookSchema(version, event)!.schema.safeParse(payload);
  const validate = jsonSchemaValidators.get(`${version} ${event}`)!;
  const json = validate(payload);
  expect({ version, event, json }).toEqual({ version, event, json: zod.success });
  return zod.success ? [] : zod.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

test('every event type exists in every payload version, each with its own JSON Schema path', () => {
  expect(webhookSchemas().map(({ version, event }) => `${version} ${event}`)).toEqual(
    PAYLOAD_VERSIONS.flatMap((version) => WEBHOOK_EVENT_TYPES.map((event) => `${version} ${event}`)),
  );
  expect(webhookSchemaPath('v2.1', 'donation.completed')).toBe('/api/webhooks/schemas/v2.1/donation.completed.json');
  expect(findWebhookSchema('v3', 'donation.completed')).toBeUndefined();
  expect(findWebhookSchema('v2.1', 'donation.refunded')).toBeUndefined();
  expect(findWebhookSchema('v2.1', 'toString')).toBeUndefined();
  const schema = findWebhookSchema('v2.1', 'donation.completed')!.jsonSchema();
  expect(schema).toMatchObject({
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    title: 'donation.completed (payload v2.1)',
    additionalProperties: false,
    required: ['id', 'event', 'created_at', 'environment', 'data'],
  });
  expect(schema).not.toHaveProperty('$ref');
});

describe('every event the platform renders, on every version, validates (the demo data through the platform commands)', () => {
  const now = new Date('2026-03-01T12:00:00Z');
  const config = loadConfig({});
  const counts: Record<string, number> = {};

  test.each(PAYLOAD_VERSIONS)('%s', async (version) => {
    const { db } = await createTestDatabase();
    try {
      await saveEndpointForEveryEvent(db, { payload_version: version }, now);
      await seedDemoData(db, config, now);
      const events: { event_type: WebhookEventType; payload: string }[] = await db('webhook_events').select('event_type', 'payload');
      for (const { event_type, payload } of events) {
        expect([event_type, errorsOf(version, event_type, JSON.parse(payload))]).toEqual([event_type, []]);
        counts[`${version} ${event_type}`] = (counts[`${version} ${event_type}`] ?? 0) + 1;
      }
      for (const event of WEBHOOK_EVENT_TYPES) expect(counts[`${version} ${event}`]).toBeGreaterThan(0);
    } finally {
      await db.destroy();
    }
  });
});

test('the hand-written v2.1 events of the delivery tests (test/support/webhook-rows.ts) validate too', async () => {
  const { db } = await createTestDatabase();
  try {
    const endpointId = await insertEndpoint(db, { url: 'https://crm.example.org/hooks' });
    for (const eventType of ['donation.completed', 'donation.reconciled'] as const) {
      const { payload } = await insertEvent(db, endpointId, { eventType });
      expect(errorsOf('v2.1', eventType, JSON.parse(payload))).toEqual([]);
    }
  } finally {
    await db.destroy();
  }
});

describe('the schemas tell the versions apart and refuse what a version does not send', () => {
  const donation = {
    id: '1000010',
    created_at: '2025-01-10T08:00:00Z',
    amount: 50,
    currency: 'CHF',
    campaign: { id: 3, title: 'Wasser für alle' },
    purpose: 'Brunnenbau',
    donor: presentedDonor(),
    payment: { transaction_id: 'tx-1', method: 'TWI', status: 'completed' },
    invoice: null,
  };
  const positions = [{ id: '1000010', amount: 50, campaign: donation.campaign, purpose: 'Brunnenbau' }];
  const envelope = (event: WebhookEventType, data: unknown) => ({
    id: 4711,
    event,
    created_at: '2025-01-10T08:00:01Z',
    environment: 'prod',
    data,
  });
  const local = { ...donation, created_at: '2025-01-10T09:00:00+01:00' };
  const reconciledPayment = { ...donation.payment, paid_out_amount: 48.55, fee_amount: 1.45, reconciled: true };

  test('the right shape validates', () => {
    expect(errorsOf('v1', 'donation.completed', envelope('donation.completed', { donation: local }))).toEqual([]);
    expect(errorsOf('v2', 'donation.completed', envelope('donation.completed', { donation }))).toEqual([]);
    expect(errorsOf('v2.1', 'donation.completed', envelope('donation.completed', { donation: { ...donation, positions } }))).toEqual([]);
    expect(errorsOf('v2.1', 'donation.recurring_completed', envelope('donation.recurring_completed', { donation }))).toEqual([]);
    expect(
      errorsOf('v2.1', 'donation.reconciled', envelope('donation.reconciled', { donation: { ...donation, payment: reconciledPayment, positions } })),
    ).toEqual([]);
  });

  test('timestamps: v1 is Swiss local time with offset, v2 and later UTC; the envelope is always UTC', () => {
    expect(errorsOf('v1', 'donation.completed', envelope('donation.completed', { donation }))).toEqual([expect.stringMatching(/^data\.donation\.created_at/)]);
    expect(errorsOf('v2', 'donation.completed', envelope('donation.completed', { donation: local }))).toEqual([expect.stringMatching(/^data\.donation\.created_at/)]);
    expect(
      errorsOf('v1', 'donation.completed', { ...envelope('donation.completed', { donation: local }), created_at: '2025-01-10T09:00:01+01:00' }),
    ).toEqual([expect.stringMatching(/^created_at/)]);
  });

  test('positions only on v2.1 and never in a recurring follow-up; custom fields never on v1', () => {
    expect(errorsOf('v2', 'donation.completed', envelope('donation.completed', { donation: { ...donation, positions } }))).not.toEqual([]);
    expect(errorsOf('v2.1', 'donation.completed', envelope('donation.completed', { donation }))).not.toEqual([]);
    expect(
      errorsOf('v2.1', 'donation.recurring_completed', envelope('donation.recurring_completed', { donation: { ...donation, positions } })),
    ).not.toEqual([]);
    const withAnswers = { ...local, donor: { ...donation.donor, custom_fields: { Anlass: 'Geburtstag', Quittung: true } } };
    expect(errorsOf('v1', 'donation.completed', envelope('donation.completed', { donation: withAnswers }))).not.toEqual([]);
    expect(
      errorsOf('v2', 'donation.completed', envelope('donation.completed', { donation: { ...withAnswers, created_at: donation.created_at } })),
    ).toEqual([]);
  });

  test('reconciliation fields in donation.reconciled only, and there all three', () => {
    const reconciledElsewhere = { donation: { ...donation, payment: reconciledPayment } };
    expect(errorsOf('v2', 'donation.completed', envelope('donation.completed', reconciledElsewhere))).not.toEqual([]);
    expect(errorsOf('v2', 'donation.reconciled', envelope('donation.reconciled', reconciledElsewhere))).toEqual([]);
    const { fee_amount: _fee, ...withoutFee } = reconciledPayment;
    expect(errorsOf('v2', 'donation.reconciled', envelope('donation.reconciled', { donation: { ...donation, payment: withoutFee } }))).not.toEqual([]);
  });

  test('unknown fields, another event name, an unknown environment and data of another event are refused', () => {
    expect(errorsOf('v2', 'donation.completed', envelope('donation.completed', { donation: { ...donation, note: 'x' } }))).not.toEqual([]);
    expect(errorsOf('v2', 'donation.completed', envelope('donation.reconciled', { donation }))).not.toEqual([]);
    expect(errorsOf('v2', 'donation.completed', { ...envelope('donation.completed', { donation }), environment: 'production' })).not.toEqual([]);
    expect(errorsOf('v2', 'shop_order.completed', envelope('shop_order.completed', { donation }))).not.toEqual([]);
    expect(errorsOf('v2', 'donation.completed', { ...envelope('donation.completed', { donation }), id: '4711' })).not.toEqual([]);
  });
});

/** The v2.1 donation.completed example of docs/webhooks.md. */
async function documentedExample(): Promise<unknown> {
  const doc = await readFile(path.join(projectRoot, 'docs/webhooks.md'), 'utf8');
  return JSON.parse(/Example, v2\.1[^\n]*\n\n```json\n([\s\S]*?)\n```/.exec(doc)![1]);
}

test('the v2.1 example in docs/webhooks.md validates', async () => {
  expect(errorsOf('v2.1', 'donation.completed', await documentedExample())).toEqual([]);
});

test('a registry with only the webhooks makes a valid OpenAPI 3.1 document with all fifteen', async () => {
  const registry = new OpenAPIRegistry();
  registerWebhookSchemas(registry);
  const document = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: { title: 'webhooks only', version: '1' },
  });
  expect(Object.keys(document.webhooks ?? {})).toEqual(
    PAYLOAD_VERSIONS.flatMap((version) => WEBHOOK_EVENT_TYPES.map((event) => `${version}/${event}`)),
  );
  const operation = document.webhooks!['v2.1/donation.completed'].post!;
  expect(operation.requestBody).toMatchObject({
    content: { 'application/json': { schema: { $ref: '#/components/schemas/WebhookV2_1DonationCompleted' } } },
  });
  expect(operation.parameters?.map((parameter) => 'name' in parameter && parameter.name)).toEqual([
    'webhook-id',
    'webhook-timestamp',
    'webhook-signature',
  ]);
  expect(operation.description).toContain('/api/webhooks/schemas/v2.1/donation.completed.json');

  const dir = await mkdtemp(path.join(os.tmpdir(), 'webhooks-openapi-'));
  try {
    const file = path.join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(document));
    const validatorCli = require.resolve('@seriousme/openapi-schema-validator/bin/validate-api-cli.js');
    const { stdout } = await promisify(execFile)(process.execPath, [validatorCli, file]);
    expect(JSON.parse(stdout)).toEqual({ valid: true });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }

  // The document's own component validates what the catalogue validates.
  const documentAjv = new Ajv2020({ strict: false });
  addFormats(documentAjv);
  documentAjv.addSchema(document, 'openapi');
  const validate = documentAjv.getSchema('openapi#/components/schemas/WebhookV2_1DonationCompleted')!;
  const example = (await documentedExample()) as Record<string, unknown>;
  expect(validate(example)).toBe(true);
  expect(validate({ ...example, event: 'donation.reconciled' })).toBe(false);
});
