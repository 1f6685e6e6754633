import { Readable } from 'node:stream';
import { createStaffUser } from '../../src/cli/create-staff-user';
import { verifyCredentials } from '../../src/auth/users';
import { loadConfig } from '../../src/config';
import type { Db } from '../../src/db/knex';
import { createTestDatabase } from '../support/database';

let db: Db;
let url: string;

beforeAll(async () => {
  ({ db, url } = await createTestDatabase());
});

afterAll(async () => {
  await db?.destroy();
});

async function run(argv: string[], { env = {}, stdin = '' }: { env?: Record<string, string>; stdin?: string } = {}) {
  const lines: string[] = [];
  const code = await createStaffUser({
    argv,
    config: loadConfig({ DATABASE_URL: url, ...env }),
    stdin: Readable.from([stdin]),
    stdout: (line) => lines.push(line),
  });
  return { code, output: lines.join('\n') };
}

test('creates a staff user with the password from STAFF_PASSWORD, hashed', async () => {
  const { code, output } = await run(['buchhaltung'], { env: { STAFF_PASSWORD: 'Säntis-2502m' } });
  expect(code).toBe(0);
  expect(output).toMatch(/^Staff user "buchhaltung" \(id \d+\) is ready\.$/);
  const row = await db('users').where({ username: 'buchhaltung' }).first();
  expect(row).toMatchObject({ is_staff: true, is_active: true });
  expect(row.password_hash).toMatch(/^scrypt\$/);
  expect(row.password_hash).not.toContain('Säntis');
  expect(await verifyCredentials(db, 'buchhaltung', 'Säntis-2502m')).toMatchObject({ is_staff: true });
});

test('reads the password from the first line of standard input, and resets an existing user', async () => {
  await db('users').where({ username: 'buchhaltung' }).update({ is_staff: false });
  const { code } = await run(['buchhaltung'], { stdin: 'Rigi-Kulm-1797\nignored\n' });
  expect(code).toBe(0);
  expect(await verifyCredentials(db, 'buchhaltung', 'Rigi-Kulm-1797')).toMatchObject({ is_staff: true });
  expect(await verifyCredentials(db, 'buchhaltung', 'Säntis-2502m')).toBeUndefined();
});

test('refuses a short password, a missing username and extra arguments (a password on the command line)', async () => {
  expect(await run(['kurz'], { env: { STAFF_PASSWORD: 'kurz' } })).toEqual({
    code: 2,
    output: 'The password must have at least 8 characters.',
  });
  expect((await run([], { env: { STAFF_PASSWORD: 'lang-genug-123' } })).code).toBe(2);
  expect((await run(['jemand', 'Passwort-im-argv'])).code).toBe(2);
  expect(await db('users').whereIn('username', ['kurz', 'jemand']).count({ n: '*' })).toEqual([{ n: 0 }]);
});
