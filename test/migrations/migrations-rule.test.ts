import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Knex } from 'knex';
import { appliedName, migrationFiles, migrationSource } from '../../migrations';
import { type Db, migrateToLatest } from '../../src/db/knex';
import { createTestDatabase } from '../support/database';
import { destructiveChanges, ruleBroken } from '../support/migration-rule';
import { LAST_MIGRATION_OF_RELEASE } from '../support/releases';

// How migrations keep a deploy safe (docs/deploying.md#schema-changes-expand-deploy-contract): their names sort in the order they run;
// the names a database recorded never change; and a migration new in this release only adds to what the previous
// release, still running during the deploy, reads and writes.

const MIGRATIONS_DIR = path.join(__dirname, '..', '..', 'migrations');

/** The names release 0.1.0 recorded in knex_migrations, in the order it applied them. */
const APPLIED_BY_0_1_0 = [
  '001_create_users_and_token_blacklist',
  '002_create_campaigns_and_links',
  '003_create_contacts',
  '004_create_checkouts_and_donations',
  '005_create_newsletter_subscriptions',
  '006_create_shop_orders',
  '007_create_webhook_endpoints_events_attempts',
  '008_notify_webhook_event_inserted',
  '009_store_donor_snapshot_on_checkouts',
  '010_create_login_failures',
  '011_maintain_contact_statistics',
  '013_count_login_failures_with_rate_limiter',
  '013_add_users_token_version',
  '014_add_webhook_event_operator_columns',
  '014_index_webhook_event_search_and_health',
  '015_add_webhook_event_relay_claims',
  '016_add_new_donations_to_contact_totals',
];

const releases = Object.keys(LAST_MIGRATION_OF_RELEASE);
const newestRelease = [...releases].sort((a, b) => a.localeCompare(b, 'en', { numeric: true })).at(-1)!;

let db: Db;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
});

afterAll(async () => {
  await db?.destroy();
});

const recordedNames = async () => (await db('knex_migrations').select('name', 'batch').orderBy('id')) as Array<{ name: string; batch: number }>;

/** Release 0.1.0's migrations as it listed them: the same modules, under the names it recorded. */
async function release010Source(): Promise<Knex.MigrationSource<unknown>> {
  const today = await migrationSource.getMigrations([]);
  const byAppliedName = new Map(today.map((entry) => [appliedName(entry[0]), entry]));
  return {
    getMigrations: async () => APPLIED_BY_0_1_0.map((name) => byAppliedName.get(name)!),
    getMigrationName: (entry) => appliedName((entry as [string])[0]),
    getMigration: (entry) => migrationSource.getMigration(entry as Parameters<typeof migrationSource.getMigration>[0]),
  };
}

test('the files sort in the order they run, and each is listed once, by its own name', () => {
  const onDisk = readdirSync(MIGRATIONS_DIR)
    .filter((name) => name.endsWith('.ts') && name !== 'index.ts')
    .map((name) => name.replace(/\.ts$/, ''));
  expect([...migrationFiles]).toEqual([...onDisk].sort());
  expect(new Set(migrationFiles.map((file) => file.slice(0, file.indexOf('_')))).size).toBe(migrationFiles.length);
  expect(migrationFiles).toEqual(expect.arrayContaining(Object.values(LAST_MIGRATION_OF_RELEASE)));
});

test('a database release 0.1.0 migrated applies none of them again, and keeps its knex_migrations rows as they are', async () => {
  await db.migrate.rollback(undefined, true);
  await db.migrate.latest({ migrationSource: await release010Source() });
  const before = await recordedNames();
  expect(before.map((row) => row.name)).toEqual(APPLIED_BY_0_1_0);

  const applied = await migrateToLatest(db);
  expect(applied).toEqual(migrationFiles.slice(APPLIED_BY_0_1_0.length).map(appliedName));
  expect((await recordedNames()).slice(0, before.length)).toEqual(before);
});

test('a database migrated today records the names release 0.1.0 knows, so that its migrate still finds them', async () => {
  const { db: fresh } = await createTestDatabase();
  try {
    const names = (await fresh('knex_migrations').select('name').orderBy('id')).map((row: { name: string }) => row.name);
    expect(names.slice(0, APPLIED_BY_0_1_0.length)).toEqual(APPLIED_BY_0_1_0);
  } finally {
    await fresh.destroy();
  }
});

test('migrating a database that a newer release already migrated further changes nothing and does not fail', async () => {
  const { db: ahead } = await createTestDatabase();
  try {
    await ahead('knex_migrations').insert({ name: '999_from_a_newer_release', batch: 99, migration_time: new Date() });
    expect(await migrateToLatest(ahead)).toEqual([]);
  } finally {
    await ahead.destroy();
  }
});

test(`migrations new since release ${newestRelease} keep it working: they only add, or are a contract step after a cut release`, () => {
  const lastReleased = migrationFiles.indexOf(LAST_MIGRATION_OF_RELEASE[newestRelease]);
  const problems = migrationFiles.slice(lastReleased + 1).flatMap((file) => {
    const broken = ruleBroken(readFileSync(path.join(MIGRATIONS_DIR, `${file}.ts`), 'utf8'), releases);
    return broken ? [`migrations/${file}.ts: ${broken}`] : [];
  });
  expect(problems).toEqual([]);
});

describe('the rule check', () => {
  const migration = (up: string, down = "await knex.schema.dropTable('x');", header = '') =>
    `import type { Knex } from 'knex';\n${header}\nexport async function up(knex: Knex): Promise<void> {\n${up}\n}\n\nexport async function down(knex: Knex): Promise<void> {\n${down}\n}\n`;

  test.each([
    ["await knex.raw('ALTER TABLE webhook_events DROP COLUMN payload');", 'drops'],
    ["await knex.raw('alter table users drop column token_version')", 'drops'],
    ["await knex.raw('DROP TABLE login_failures');", 'drops'],
    ["await knex.raw('ALTER TABLE users RENAME COLUMN username TO login');", 'renames'],
    ["await knex.raw('ALTER TABLE contacts RENAME TO people');", 'renames'],
    ["await knex.raw('ALTER TABLE checkouts ALTER COLUMN amount_minor TYPE numeric');", 'type'],
    ["await knex.raw('ALTER TABLE checkouts ALTER COLUMN amount_minor SET DATA TYPE numeric');", 'type'],
    ["await knex.raw('ALTER TABLE users ALTER COLUMN email SET NOT NULL');", 'NOT NULL'],
    ["await knex.raw('ALTER TABLE users ADD COLUMN tenant text NOT NULL');", 'NOT NULL column without a default'],
    ["await knex.schema.alterTable('users', (t) => {\n  t.dropColumn('email');\n});", 'drops'],
    ["await knex.schema.dropTableIfExists('login_failures');", 'drops'],
    ["await knex.schema.alterTable('users', (t) => {\n  t.renameColumn('email', 'mail');\n});", 'renames'],
    ["await knex.schema.renameTable('users', 'accounts');", 'renames'],
    ["await knex.schema.alterTable('users', (t) => {\n  t.text('email').notNullable().alter();\n});", 'changes an existing column'],
    ["await knex.schema.alterTable('users', (t) => {\n  t.dropNullable('email');\n});", 'NOT NULL'],
    ["await knex.schema.alterTable('users', (t) => {\n  t.text('note');\n  t.integer('tenant').notNullable();\n});", 'NOT NULL column without a default'],
  ])('refuses %s', (up, what) => {
    expect(destructiveChanges(migration(up)).join('; ')).toContain(what);
    expect(ruleBroken(migration(up), ['0.1.0'])).toMatch(/not while the previous release runs/);
  });

  test.each([
    "await knex.schema.createTable('things', (t) => {\n  t.increments('id');\n  t.text('name').notNullable();\n});",
    "await knex.schema.alterTable('users', (t) => {\n  t.text('note');\n  t.integer('version').notNullable().defaultTo(0);\n});",
    "await knex.raw('ALTER TABLE users ADD COLUMN version integer NOT NULL DEFAULT 0');",
    "await knex.raw('CREATE INDEX CONCURRENTLY users_email ON users (email)');",
    "// A later release drops the old column (DROP COLUMN), once no release reads it.\nawait knex.raw('ALTER TABLE users ADD COLUMN mail text');",
    "await knex.raw('DROP TRIGGER recount ON donations');\nawait knex.raw('DROP FUNCTION recount()');",
  ])('lets through %s', (up) => {
    expect(destructiveChanges(migration(up))).toEqual([]);
  });

  test('a NOT NULL the migration says every insert of the previous release fills is allowed; nothing else is excused by it', () => {
    const filled = '// Filled for the previous release by the trigger above: its inserts name no tenant.';
    const notNull = "await knex.raw('ALTER TABLE users ALTER COLUMN tenant SET NOT NULL');";
    expect(ruleBroken(migration(notNull), ['0.1.0'])).toMatch(/NOT NULL/);
    expect(ruleBroken(migration(notNull, '', filled), ['0.1.0'])).toBeUndefined();
    const drop = "await knex.raw('ALTER TABLE users DROP COLUMN legacy_flag');";
    expect(ruleBroken(migration(`${notNull}\n${drop}`, '', filled), ['0.1.0'])).toMatch(/drops/);
  });

  test('a contract step is allowed after a release that has been cut, not after one still to come', () => {
    const drop = "await knex.raw('ALTER TABLE users DROP COLUMN legacy_flag');";
    expect(ruleBroken(migration(drop, '', '// Contract step after release 0.1.0: 0.1.0 stopped reading legacy_flag.'), ['0.1.0'])).toBeUndefined();
    expect(ruleBroken(migration(drop, '', '// Contract step after release 0.3.0.'), ['0.1.0'])).toMatch(/0\.3\.0, which has not been cut/);
  });
});
