import { createStaffUser } from '../../src/cli/create-staff-user';
import { verifyCredentials } from '../../src/auth/accounts';
import type { Db } from '../../src/db/knex';
import { createTestDatabase } from '../support/database';
import { runCli } from './run-cli';

let db: Db;
let url: string;

beforeAll(async () => {
  ({ db, url } = await createTestDatabase());
});

afterAll(async () => {
  await db?.destroy();
});

const run = (argv: string[], options?: { env?: Record<string, string>; stdin?: string }) => runCli(createStaffUser, url, argv, options);

test('creates a staff user with the password from STAFF_PASSWORD, hashed', async () => {
  const { code, output } = await run(['buchhaltung'], { env: { STAFF_PASSWORD: 'Säntis-2502m' } });
  expect(code).toBe(0);
  expect(output).toMatch(/^Created user "buchhaltung" \(id \d+, staff\)\.$/);
  const row = await db('users').where({ username: 'buchhaltung' }).first();
  expect(row).toMatchObject({ is_staff: true, is_active: true });
  expect(row.password_hash).toMatch(/^scrypt\$/);
  expect(row.password_hash).not.toContain('Säntis');
  expect(await verifyCredentials(db, 'buchhaltung', 'Säntis-2502m')).toMatchObject({ is_staff: true });
});

test('reads the password from the first line of standard input', async () => {
  const { code } = await run(['kasse'], { stdin: 'Rigi-Kulm-1797\nignored\n' });
  expect(code).toBe(0);
  expect(await verifyCredentials(db, 'kasse', 'Rigi-Kulm-1797')).toMatchObject({ is_staff: true });
});

test('leaves an existing user as it is, deactivated or not, and says so', async () => {
  await db('users').where({ username: 'buchhaltung' }).update({ is_active: false, is_staff: false });
  const { code, output } = await run(['buchhaltung'], { env: { STAFF_PASSWORD: 'Neues-Passwort-1' } });
  expect(code).toBe(1);
  expect(output).toBe(
    'User "buchhaltung" (id ' +
      `${(await db('users').where({ username: 'buchhaltung' }).first()).id}, not staff, deactivated) already exists; ` +
      'nothing changed. Use set-password, activate or set-staff to change it.',
  );
  expect(await db('users').where({ username: 'buchhaltung' }).first()).toMatchObject({ is_active: false, is_staff: false });
  expect(await verifyCredentials(db, 'buchhaltung', 'Neues-Passwort-1')).toBeUndefined();
});

test('refuses a short password, a missing username and extra arguments (a password on the command line)', async () => {
  const short = await run(['kurz'], { env: { STAFF_PASSWORD: 'kurz' } });
  expect(short.code).toBe(2);
  expect(short.output).toMatch(/^The password must have at least 8 characters\.\nUsage: npm run users/);
  expect((await run([], { env: { STAFF_PASSWORD: 'lang-genug-123' } })).code).toBe(2);
  const inArgv = await run(['jemand', 'Passwort-im-argv']);
  expect(inArgv.code).toBe(2);
  expect(inArgv.output).not.toContain('Passwort-im-argv');
  expect(await db('users').whereIn('username', ['kurz', 'jemand']).count({ n: '*' })).toEqual([{ n: 0 }]);
});
