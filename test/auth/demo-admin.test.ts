import { findUserByName } from '../../src/users/user-store';
import { verifyCredentials } from '../../src/auth/accounts';
import { loadConfig } from '../../src/config';
import type { Db } from '../../src/db/knex';
import { ensureDemoAdmin } from '../../src/demo/admin-user';
import { createTestDatabase } from '../support/database';

let db: Db;
beforeAll(async () => {
  ({ db } = await createTestDatabase());
});
afterAll(async () => {
  await db?.destroy();
});

const configWith = (password: string) => loadConfig({ ADMIN_USERNAME: 'demo-admin', ADMIN_PASSWORD: password });
const version = async () => (await findUserByName(db, 'demo-admin'))?.token_version;

test('a restart keeps the demo admin and its sessions; a new ADMIN_PASSWORD or a broken account is reset', async () => {
  await ensureDemoAdmin(db, configWith('Demo-Passwort-1'));
  const first = await version();
  await ensureDemoAdmin(db, configWith('Demo-Passwort-1'));
  expect(await version()).toBe(first);

  await ensureDemoAdmin(db, configWith('Demo-Passwort-2'));
  expect(await version()).toBe(first! + 1);
  expect(await verifyCredentials(db, 'demo-admin', 'Demo-Passwort-2')).toMatchObject({ is_staff: true });

  await db('users').where({ username: 'demo-admin' }).update({ is_staff: false });
  await ensureDemoAdmin(db, configWith('Demo-Passwort-2'));
  expect(await verifyCredentials(db, 'demo-admin', 'Demo-Passwort-2')).toMatchObject({ is_staff: true });
});
