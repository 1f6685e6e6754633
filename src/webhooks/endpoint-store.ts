import type { Knex } from 'knex';
import type { PayloadVersion } from '../db/models';
import { WebhookEndpointModel } from '../db/models';
import type { WebhookEventType } from './event-types';

/** One endpoint per platform: the row with this key is the platform's endpoint. */
export const PLATFORM_KEY = 'default';

export interface EndpointSettings {
  url: string;
  active: boolean;
  payload_version: PayloadVersion;
  events: WebhookEventType[];
  basic_auth_username: string | null;
  basic_auth_password: string | null;
  signing_secret: string | null;
}

const SETTINGS_COLUMNS = [
  'url',
  'active',
  'payload_version',
  'events',
  'basic_auth_username',
  'basic_auth_password',
  'signing_secret',
] as const satisfies readonly (keyof EndpointSettings)[];

/** Exactly the configurable settings of an endpoint row (its event types were validated when saved). */
export function settingsOf(endpoint: EndpointSettings | WebhookEndpointModel): EndpointSettings {
  return Object.fromEntries(SETTINGS_COLUMNS.map((column) => [column, endpoint[column]])) as unknown as EndpointSettings;
}

/** The platform's endpoint; `forUpdate` locks it until the caller's transaction ends. */
export async function findEndpoint(db: Knex, { forUpdate = false } = {}): Promise<WebhookEndpointModel | undefined> {
  const query = WebhookEndpointModel.query(db).findOne({ platform: PLATFORM_KEY });
  return forUpdate ? query.forUpdate() : query;
}

/** Creates or replaces the platform's endpoint; events already created keep the payload they were rendered with. */
export async function saveEndpoint(db: Knex, settings: EndpointSettings, now: Date): Promise<WebhookEndpointModel> {
  const [row] = await db('webhook_endpoints')
    .insert({ platform: PLATFORM_KEY, ...settingsOf(settings), created_at: now, updated_at: now })
    .onConflict('platform')
    .merge([...SETTINGS_COLUMNS, 'updated_at'])
    .returning('*');
  return WebhookEndpointModel.fromJson(row, { skipValidation: true });
}
