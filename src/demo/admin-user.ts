import type { Config } from '../config';
import type { Db } from '../db/knex';
import { upsertUser, verifyCredentials } from '../auth/users';
import { persistedLocalSecret } from './local-secret';

/**
 * The demo staff user of the embedded default; without ADMIN_PASSWORD its password is generated once and kept.
 * Reset only when it does not already sign in as staff with that password: a reset ends its sessions, and a
 * restart should not.
 */
export async function ensureDemoAdmin(db: Db, config: Config): Promise<{ username: string; password: string }> {
  const username = config.demo.adminUsername;
  const password = config.demo.adminPassword ?? (await persistedLocalSecret(config.database.dataDir, 'admin-password', 12));
  if (!(await verifyCredentials(db, username, password))?.is_staff) await upsertUser(db, { username, password, isStaff: true });
  return { username, password };
}
