import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { resolveSpecifier, ROOT, sourceFiles } from './import-graph';
import { namedImports, type SqlReference, sqlReferences, stringConstants } from './sql-references';

/*
 * One owner per table (docs/architecture.md): the folder of its aggregate, whose modules hold the table's name, its queries
 * and its row types (or, for a table of no aggregate, one module). No other file in src/ or activities/ names the table
 * in a query, also not through a name imported from the owner. A read query that lists one aggregate and shows fields
 * of another belongs to the aggregate it lists, and may join the other's tables (JOINS).
 */

/** The owner of every table and sequence the migrations create: a folder (ending in `/`) or one module. */
const OWNERS: Record<string, string> = {
  users: 'src/users/',
  refresh_token_blacklist: 'src/users/',
  ended_sessions: 'src/users/',
  // rate-limiter-flexible reads and writes it; the throttle hands it the table's name (migration 013).
  login_failures: 'src/auth/login-throttle.ts',
  campaigns: 'src/campaign-links/',
  campaign_links: 'src/campaign-links/',
  contacts: 'src/contacts/',
  // Written only by the triggers of migration 011; the contact store reads them.
  contact_donation_totals: 'src/contacts/',
  contact_counts: 'src/contacts/',
  checkouts: 'src/donations/',
  donations: 'src/donations/',
  recurring_donations: 'src/donations/',
  reconciliations: 'src/donations/',
  donation_number_seq: 'src/donations/',
  newsletter_subscriptions: 'src/newsletter/',
  shop_orders: 'src/shop/',
  shop_order_addresses: 'src/shop/',
  shop_order_items: 'src/shop/',
  shop_order_number_seq: 'src/shop/',
  // Written only by the triggers of migration 019 on checkouts and shop_orders.
  transaction_ids: 'src/donations/',
  webhook_endpoints: 'src/webhook-endpoint/',
  webhook_events: 'src/webhook-events/',
  webhook_delivery_attempts: 'src/webhook-events/',
  webhook_attempt_starts: 'src/webhook-events/',
  webhook_event_references: 'src/webhook-events/',
  // Written only by the triggers of migration 024 on webhook_events.
  webhook_event_counts: 'src/webhook-events/',
  // This database's installation id and its event id check (migration 020).
  installation: 'src/webhook-events/',
};

/** Read queries of an owner that join another owner's tables: the donation rows show contact and campaign, … */
const JOINS: Record<string, string[]> = {
  'src/donations/': ['contacts', 'campaigns'],
  'src/newsletter/': ['contacts'],
  // An attempt reads its event with the endpoint's URL and credentials in one query; a delivery starts with its host.
  'src/webhook-events/': ['webhook_endpoints'],
};

const NAMES = new Set(Object.keys(OWNERS));

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** Whether `file` is `owner` or lies in it. */
const ownedBy = (file: string, owner: string) => (owner.endsWith('/') ? file.startsWith(owner) : file === owner);

/** The string constants `file` imports from our modules, by the name they go by in `file`. */
function importedConstants(file: string, source = read(file)): Map<string, string> {
  const constants = new Map<string, string>();
  for (const { from, imported, local } of namedImports(source)) {
    const module = resolveSpecifier(file, from);
    const value = module && stringConstants(read(module)).get(imported);
    if (value !== undefined) constants.set(local, value);
  }
  return constants;
}

const referencesIn = (file: string, names: ReadonlySet<string>) => sqlReferences(read(file), names, importedConstants(file));

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
  if (ownedBy(file, OWNERS[reference.name])) return true;
  return (
    reference.kind === 'join' && Object.entries(JOINS).some(([owner, tables]) => ownedBy(file, owner) && tables.includes(reference.name))
  );
}

/** The owner's modules: the folder's, or the one module. */
function modulesOf(owner: string): string[] {
  if (!existsSync(path.join(ROOT, owner))) return [];
  return statSync(path.join(ROOT, owner)).isDirectory() ? sourceFiles(owner.slice(0, -1)) : [owner];
}

describe('every table has one owner', () => {
  test('every table and sequence the migrations create is listed with its owner, and nothing else is', () => {
    expect([...createdByMigrations()].sort()).toEqual([...NAMES].sort());
  });

  test('every owner exists and names its tables', () => {
    const unnamed = Object.entries(OWNERS)
      .filter(([name, owner]) => !modulesOf(owner).some((module) => referencesIn(module, new Set([name])).length > 0))
      .map(([name, owner]) => `${owner} (${name})`);
    expect(unnamed).toEqual([]);
  });

  test('no file in src/ or activities/ names a table in a query outside its owner', () => {
    const strays = [...sourceFiles('src'), ...sourceFiles('activities')].flatMap((file) =>
      referencesIn(file, NAMES)
        .filter((reference) => !isAllowed(file, reference))
        .map(({ name, kind, text }) => `${file}: ${name} (${kind}, in ${text}), owned by ${OWNERS[name]}`),
    );
    expect(strays).toEqual([]);
  });

  test('a table name imported from its owner still counts: a query outside the folder is found', () => {
    const file = 'src/admin/event-views.ts';
    const source = "import { EVENTS as T } from '../webhook-events/tables';\nexport const all = (db: Db) => db(T).select('id');";
    const found = sqlReferences(source, NAMES, importedConstants(file, source)).filter((reference) => !isAllowed(file, reference));
    expect(found.map(({ name }) => name)).toEqual(['webhook_events']);
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
