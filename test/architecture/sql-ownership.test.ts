import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { type SqlReference, sqlReferences } from './sql-references';

/*
 * One owner per table (ARCHITECTURE.md): a store module that holds the table's name, its queries and its row types.
 * No other file in src/ or activities/ names the table in a query. A read query that lists one aggregate and shows
 * fields of another belongs to the store of the aggregate it lists, and may join the other's tables (JOINS).
 */

const ROOT = path.resolve(__dirname, '../..');

/** The owner of every table and sequence the migrations create. */
const OWNERS: Record<string, string> = {
  users: 'src/users/user-store.ts',
  refresh_token_blacklist: 'src/users/refresh-token-store.ts',
  ended_sessions: 'src/users/session-store.ts',
  // rate-limiter-flexible reads and writes it; the throttle hands it the table's name (migration 013).
  login_failures: 'src/auth/login-throttle.ts',
  campaigns: 'src/campaign-links/campaign-store.ts',
  campaign_links: 'src/campaign-links/campaign-store.ts',
  contacts: 'src/contacts/contact-store.ts',
  // Written only by the triggers of migration 011; the contact store reads them.
  contact_donation_totals: 'src/contacts/contact-store.ts',
  contact_counts: 'src/contacts/contact-store.ts',
  checkouts: 'src/donations/payment-store.ts',
  donations: 'src/donations/payment-store.ts',
  recurring_donations: 'src/donations/payment-store.ts',
  reconciliations: 'src/donations/payment-store.ts',
  donation_number_seq: 'src/donations/payment-store.ts',
  newsletter_subscriptions: 'src/newsletter/newsletter-store.ts',
  shop_orders: 'src/shop/shop-order-store.ts',
  shop_order_addresses: 'src/shop/shop-order-store.ts',
  shop_order_items: 'src/shop/shop-order-store.ts',
  shop_order_number_seq: 'src/shop/shop-order-store.ts',
  // Written only by the triggers of migration 019 on checkouts and shop_orders.
  transaction_ids: 'src/donations/transaction-id-store.ts',
  webhook_endpoints: 'src/webhook-endpoint/endpoint-store.ts',
  webhook_events: 'src/webhook-events/attempts.ts',
  webhook_delivery_attempts: 'src/webhook-events/attempts.ts',
  webhook_event_references: 'src/webhook-events/attempts.ts',
};

/** Read queries of a store that join another store's tables: the donation rows show contact and campaign, … */
const JOINS: Record<string, string[]> = {
  'src/donations/payment-store.ts': ['contacts', 'campaigns'],
  'src/newsletter/newsletter-store.ts': ['contacts'],
  // An attempt reads its event with the endpoint's URL and credentials in one query; a delivery starts with its host.
  'src/webhook-events/attempts.ts': ['webhook_endpoints'],
};

const NAMES = new Set(Object.keys(OWNERS));

function sourceFiles(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => path.posix.join(folder, file.split(path.sep).join('/')))
    .sort();
}

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Tables and sequences the migrations create, from their source. */
function createdByMigrations(): Set<string> {
  const created = new Set<string>();
  for (const file of sourceFiles('migrations')) {
    for (const match of read(file).matchAll(/createTable\(\s*'(\w+)'|CREATE\s+(?:TABLE|SEQUENCE)\s+(?:IF\s+NOT\s+EXISTS\s+)?(\w+)/gi)) {
      created.add((match[1] ?? match[2]).toLowerCase());
    }
  }
  return created;
}

function isAllowed(file: string, reference: SqlReference): boolean {
  if (OWNERS[reference.name] === file) return true;
  return reference.kind === 'join' && (JOINS[file]?.includes(reference.name) ?? false);
}

describe('every table has one owner', () => {
  test('every table and sequence the migrations create is listed with its owner, and nothing else is', () => {
    expect([...createdByMigrations()].sort()).toEqual([...NAMES].sort());
  });

  test('every owner exists and names its tables', () => {
    const unnamed = Object.entries(OWNERS)
      .filter(([name, owner]) => !existsSync(path.join(ROOT, owner)) || !sqlReferences(read(owner), new Set([name])).length)
      .map(([name, owner]) => `${owner} (${name})`);
    expect(unnamed).toEqual([]);
  });

  test('no file in src/ or activities/ names a table in a query outside its owner', () => {
    const strays = [...sourceFiles('src'), ...sourceFiles('activities')].flatMap((file) =>
      sqlReferences(read(file), NAMES)
        .filter((reference) => !isAllowed(file, reference))
        .map(({ name, kind, text }) => `${file}: ${name} (${kind}, in ${text}), owned by ${OWNERS[name]}`),
    );
    expect(strays).toEqual([]);
  });
});

describe('finding table names in queries', () => {
  const names = new Set(['contacts', 'donation_number_seq']);
  const found = (source: string) => sqlReferences(source, names).map(({ name, kind }) => `${kind} ${name}`);

  test.each([
    ["db('contacts').where({ id })", 'table'],
    ['trx("contacts as ct").first()', 'table'],
    ['context.db(`contacts`)', 'table'],
    ["this.knex('Contacts AS c')", 'table'],
    ["db('public.contacts')", 'table'],
    ["db('\"contacts\"')", 'table'],
    ["db({ c: 'contacts' })", 'table'],
    ["db.from('contacts')", 'table'],
    ["db.insert(row).into('contacts')", 'table'],
    ["db.queryBuilder().table('contacts')", 'table'],
    ["const TABLE = 'contacts'; db(TABLE)", 'table'],
    ["const T = 'contacts' as const; db(`${T} as c`)", 'table'],
    ["db('con' + 'tacts')", 'table'],
    ["new Limiter({ tableName: 'contacts' })", 'table'],
    ["class M { static tableName = 'contacts'; }", 'table'],
    ["q.leftJoin('contacts as ct', 'ct.id', 'd.contact_id')", 'join'],
    ["q.joinRaw('LEFT JOIN contacts ct ON ct.id = d.contact_id')", 'join'],
    ["db.raw('select * from contacts')", 'raw'],
    ['db.raw(`UPDATE "contacts" SET newsletter = true`)', 'raw'],
    ["db.raw('DELETE FROM public.contacts')", 'raw'],
    ["db.raw(`SELECT nextval('donation_number_seq')`)", 'raw'],
    ["db.raw('SELECT c.id FROM checkouts c, contacts ct WHERE ct.id = c.contact_id')", 'raw'],
    ["db.raw('SELECT 1 FROM x WHERE contacts.id = x.id')", 'raw'],
    ["db.raw('DELETE FROM x USING contacts WHERE contacts.id = x.id')", 'raw'],
    ["const sql = 'SELECT count(*) FROM contacts'", 'raw'],
  ])('%s names a table (%s)', (source, kind) => {
    expect(found(source)).toContainEqual(expect.stringMatching(new RegExp(`^${kind} `)));
  });

  test.each([
    "// reads from contacts\nconst x = 1;",
    "/** SELECT * FROM contacts */\nconst x = 1;",
    "const path = '/crm/contacts/';",
    "const label = 'Contacts with donation statistics';",
    "server.createDatabase('contacts');",
    "embeddedConnectionString(password, port, 'contacts');",
    "runAsMain('contacts', command);",
    "const usage = 'list contacts (password from STDIN)';",
    "db('contact_counts').sum({ count: 'contacts' })",
    "db('other').where('email', 'contacts')",
  ])('%s names none', (source) => {
    expect(found(source)).toEqual([]);
  });
});
