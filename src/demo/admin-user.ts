import type { Config } from '../config';
import type { Db } from '../db/knex';
import { upsertUser } from '../auth/users';
import { persistedLocalSecret } from './local-secret';

/** The demo staff user of the embedded default; without ADMIN_PASSWORD its password is generated once and kept. */
export async function ensureDemoAdmin(db: Db, config: Config): Promise<{ username: string; password: string }> {
  const username = config.demo.adminUsername;
  const password = config.demo.adminPassword ?? (await persistedLocalSecret(config.database.dataDir, 'admin-password', 12));
  await upsertUser(db, { username, password, isStaff: true });
  return { username, password };
}
