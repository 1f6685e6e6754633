import type { Config } from '../config';
import type { Db } from '../db/knex';
import { upsertUser, verifyCredentials } from '../auth/accounts';
import { persistedLocalSecret } from '../secrets/local-secret';

export interface DemoAccount {
  username: string;
  password: string;
}

/**
 * The demo staff user of the embedded default; without ADMIN_PASSWORD its password is generated once and kept.
 * Reset only when it does not already sign in as staff with that password: a reset ends its sessions, and a
 * restart should not.
 */
export async function ensureDemoAdmin(db: Db, config: Config): Promise<DemoAccount> {
  const username = config.demo.adminUsername;
  const password = config.demo.adminPassword ?? (await persistedLocalSecret(config.database.dataDir, 'admin-password', 12));
  if (!(await verifyCredentials(db, username, password))?.is_staff) await upsertUser(db, { username, password, isStaff: true });
  return { username, password };
}

/** Signs in like anyone, and shows what a valid account without staff permission gets from the API: 403. */
export const DEMO_NON_STAFF_USERNAME = 'viewer';

/** The demo's active user without staff permission; its password is generated once and kept like the admin's. */
export async function ensureDemoNonStaffUser(db: Db, config: Config): Promise<DemoAccount> {
  const password = await persistedLocalSecret(config.database.dataDir, 'viewer-password', 12);
  // As for the admin: a reset would end its sessions, and a restart should not.
  if (!(await verifyCredentials(db, DEMO_NON_STAFF_USERNAME, password))) {
    await upsertUser(db, { username: DEMO_NON_STAFF_USERNAME, password, isStaff: false });
  }
  return { username: DEMO_NON_STAFF_USERNAME, password };
}
