import { z } from 'zod';
import { timestamp } from '../../shared/value-schemas';
import { ENVELOPE_ENVIRONMENTS } from '../envelope';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from '../event-types';
import { PAYLOAD_VERSIONS, type PayloadVersion, payloadFeatures } from '../payload-versions';
import { dataSchema } from './payload-schemas';

/**
 * One schema per payload version and event type: the whole request body a subscriber receives. Every event type
 * exists on every version; what differs is declared in payload-versions.ts.
 */
export interface WebhookSchema {
  version: PayloadVersion;
  event: WebhookEventType;
  /** The envelope with this event's `data`, strict: exactly the fields this version sends. */
  schema: z.ZodType;
  /** The same as a standalone JSON Schema (draft 2020-12), as served under `webhookSchemaPath`. */
  jsonSchema(): Record<string, unknown>;
}

const EVENT_DESCRIPTIONS: Record<WebhookEventType, string> = {
  'donation.completed':
    'A donation completed (or a QR invoice was issued, payment pending). On v2.1 a multi-checkout is one event with ' +
    '`positions`; on v1 and v2 one event per position.',
  'donation.recurring_completed':
    'A follow-up payment of a recurring donation: online (method of the first donation, completed) or by QR ' +
    'invoice (INV, pending, with the reference). Never carries `positions`.',
  'donation.reconciled':
    "The provider reported payout and fee of a payment: the originating event's donation plus `paid_out_amount`, " +
    '`fee_amount` and `reconciled`. May arrive before its donation.completed.',
  'newsletter.subscribed': 'A newsletter sign-up was confirmed (double opt-in), on the first click only.',
  'shop_order.completed': 'A shop order completed, for registered customers and guests alike.',
};

/** `v2.1` + `donation.completed` → `WebhookV2_1DonationCompleted`, an OpenAPI component name. */
const componentName = (version: PayloadVersion, event: WebhookEventType) =>
  `Webhook${version.toUpperCase().replace('.', '_')}${event
    .split(/[._]/)
    .map((word) => word[0].toUpperCase() + word.slice(1))
    .join('')}`;

function envelopeSchema(version: PayloadVersion, event: WebhookEventType) {
  return z
    .strictObject({
      id: z.number().int().positive().meta({ description: 'Event id, the same on every attempt (and in `webhook-id`)' }),
      event: z.literal(event),
      created_at: timestamp('utc').meta({ description: 'When the event was created, UTC on every version' }),
      environment: z.enum(ENVELOPE_ENVIRONMENTS).meta({
        description: '`test` for TEST payments and sign-ups of TEST contacts; otherwise `prod`, or `stage` on a staging platform',
      }),
      data: dataSchema(event, payloadFeatures(version)),
    })
    .meta({ id: componentName(version, event), title: `${event} (payload ${version})`, description: EVENT_DESCRIPTIONS[event] });
}

/** zod names the root after its id and references it; a served file is easier to read with the root inline. */
function standalone(schema: z.ZodType): Record<string, unknown> {
  const { $ref, $defs = {}, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12' }) as {
    $ref?: string;
    $defs?: Record<string, Record<string, unknown>>;
  } & Record<string, unknown>;
  const rootName = $ref?.replace('#/$defs/', '');
  if (!rootName) return { ...rest, $defs };
  const { [rootName]: root, ...others } = $defs;
  return { ...rest, ...root, ...(Object.keys(others).length > 0 ? { $defs: others } : {}) };
}

// Built once: component ids are registered globally and must stay unique.
const CATALOGUE: readonly WebhookSchema[] = PAYLOAD_VERSIONS.flatMap((version) =>
  WEBHOOK_EVENT_TYPES.map((event) => {
    const schema = envelopeSchema(version, event);
    return { version, event, schema, jsonSchema: () => standalone(schema) };
  }),
);

/** Every event type in every payload version, versions oldest first. */
export function webhookSchemas(): readonly WebhookSchema[] {
  return CATALOGUE;
}

/** The schema of one version and event, or undefined for a name that is neither (a 404 where it is served). */
export function findWebhookSchema(version: string, event: string): WebhookSchema | undefined {
  return CATALOGUE.find((entry) => entry.version === version && entry.event === event);
}

/** Where the JSON Schema of one version and event is served, e.g. `/api/webhooks/schemas/v2.1/donation.completed.json`. */
export const webhookSchemaPath = (version: PayloadVersion, event: WebhookEventType) =>
  `/api/webhooks/schemas/${version}/${event}.json`;
