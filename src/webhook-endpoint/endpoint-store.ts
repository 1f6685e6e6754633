import type { Knex } from 'knex';
import type { PayloadVersion } from '../webhooks/payload-versions';
import { type Keyring, SecretUnreadable } from '../secrets/keyring';
import type { WebhookEventType } from '../webhooks/event-types';

/** One endpoint per platform: the row with this key is the platform's endpoint. */
export const PLATFORM_KEY = 'default';

const TABLE = 'webhook_endpoints';

export interface EndpointSettings {
  url: string;
  active: boolean;
  payload_version: PayloadVersion;
  events: WebhookEventType[];
  basic_auth_username: string | null;
  basic_auth_password: string | null;
  signing_secret: string | null;
}

/** The columns that hold secrets: sealed at rest (src/secrets/keyring.ts), opened only here and for a delivery. */
const SECRET_COLUMNS = ['basic_auth_password', 'signing_secret'] as const;
export type SecretColumn = (typeof SECRET_COLUMNS)[number];
type EndpointSecrets = Pick<EndpointSettings, SecretColumn>;

const PLAIN_SETTINGS_COLUMNS = ['url', 'active', 'payload_version', 'events', 'basic_auth_username'] as const;
const SETTINGS_COLUMNS = [...PLAIN_SETTINGS_COLUMNS, ...SECRET_COLUMNS] as const satisfies readonly (keyof EndpointSettings)[];

/** The endpoint row without its secrets: whether each is set, never its value. */
export interface EndpointRecord extends Omit<EndpointSettings, SecretColumn> {
  id: number;
  basic_auth_password_set: boolean;
  signing_secret_set: boolean;
  created_at: Date;
  updated_at: Date;
}

/** Where a secret lives; part of what is sealed, so a value copied into another column does not open there. */
const purposeOf = (column: SecretColumn) => `${TABLE}.${column}`;

/** The row with each secret column passed through `transform` (a missing secret stays null). */
function withSecrets<Row extends EndpointSecrets>(row: Row, transform: (value: string, purpose: string, column: SecretColumn) => string): Row {
  const result = { ...row };
  for (const column of SECRET_COLUMNS) {
    const value = row[column];
    result[column] = value === null ? null : transform(value, purposeOf(column), column);
  }
  return result;
}

/** The secrets of an endpoint, sealed as they are stored (a delivery opens them with openEndpointSecrets). */
export function sealEndpointSecrets<Row extends EndpointSecrets>(settings: Row, keyring: Keyring): Row {
  return withSecrets(settings, (value, purpose) => keyring.seal(value, purpose));
}

/**
 * The secrets of an endpoint row as read from the table, opened. A delivery reads the row with its event in one
 * query and opens the two columns with this; nothing else reads them.
 */
export function openEndpointSecrets<Row extends EndpointSecrets>(row: Row, keyring: Keyring): Row {
  return withSecrets(row, (value, purpose) => keyring.open(value, purpose));
}

const recordColumns = (db: Knex) => [
  'id',
  ...PLAIN_SETTINGS_COLUMNS,
  'created_at',
  'updated_at',
  db.raw('basic_auth_password IS NOT NULL AS basic_auth_password_set'),
  db.raw('signing_secret IS NOT NULL AS signing_secret_set'),
];

/** The platform's endpoint, without its secrets. */
export async function findEndpoint(db: Knex): Promise<EndpointRecord | undefined> {
  return db(TABLE).where({ platform: PLATFORM_KEY }).first(recordColumns(db));
}

/** A stored secret that the keyring cannot open (sealed with a key SECRETS_KEYS no longer holds, or altered). */
export interface UnreadableSecret {
  column: SecretColumn;
  /** Names the column and the key, never a value. */
  reason: string;
}

/**
 * The platform's endpoint settings, locked for a change within the caller's transaction, with the secrets opened.
 * A secret that does not open is listed in `unreadable` and left sealed in `settings`: only a change that gives
 * it again (or clears it) can be saved, and the admin must be able to make that change, so it is not an error here.
 */
export async function findEndpointSettingsForUpdate(
  db: Knex,
  keyring: Keyring,
): Promise<{ settings: EndpointSettings; unreadable: UnreadableSecret[] } | undefined> {
  const row: EndpointSettings | undefined = await db(TABLE).where({ platform: PLATFORM_KEY }).forUpdate().first(SETTINGS_COLUMNS);
  if (!row) return undefined;
  const unreadable: UnreadableSecret[] = [];
  const settings = withSecrets(row, (value, purpose, column) => {
    try {
      return keyring.open(value, purpose);
    } catch (err) {
      if (!(err instanceof SecretUnreadable)) throw err;
      unreadable.push({ column, reason: err.message });
      return value;
    }
  });
  return { settings, unreadable };
}

/**
 * Creates or replaces the platform's endpoint, its secrets sealed with the keyring's current key; events already
 * created keep the payload they were rendered with.
 */
export async function saveEndpoint(db: Knex, settings: EndpointSettings, now: Date, keyring: Keyring): Promise<EndpointRecord> {
  const sealed = sealEndpointSecrets(settings, keyring);
  const row = Object.fromEntries(SETTINGS_COLUMNS.map((column) => [column, sealed[column]]));
  const [saved] = await db(TABLE)
    .insert({ platform: PLATFORM_KEY, ...row, created_at: now, updated_at: now })
    .onConflict('platform')
    .merge([...SETTINGS_COLUMNS, 'updated_at'])
    .returning(recordColumns(db));
  return saved;
}

/**
 * Seals every stored secret that is not sealed with the keyring's current key yet (plain values from before
 * encryption, values under an older key), in one transaction, every endpoint row. Returns how many values changed.
 */
export async function resealEndpointSecrets(db: Knex, keyring: Keyring): Promise<{ rows: number; values: number }> {
  return db.transaction(async (trx) => {
    const rows: (EndpointSecrets & { id: number })[] = await trx(TABLE).select('id', ...SECRET_COLUMNS).orderBy('id').forUpdate();
    let values = 0;
    for (const row of rows) {
      const change: Partial<EndpointSecrets> = {};
      for (const column of SECRET_COLUMNS) {
        const stored = row[column];
        if (stored === null || keyring.isSealedWithCurrentKey(stored)) continue;
        change[column] = keyring.seal(keyring.open(stored, purposeOf(column)), purposeOf(column));
        values += 1;
      }
      if (Object.keys(change).length > 0) await trx(TABLE).where({ id: row.id }).update(change);
    }
    return { rows: rows.length, values };
  });
}
