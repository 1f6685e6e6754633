import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Config } from '../config';
import type { Db } from '../db/knex';
import { upsertUser } from '../auth/users';

/**
 * The demo staff user of the embedded default. Without ADMIN_PASSWORD a password is generated once and kept in
 * the data folder (readable by its owner only), so it stays the same across restarts.
 */
export async function ensureDemoAdmin(db: Db, config: Config): Promise<{ username: string; password: string }> {
  const username = config.demo.adminUsername;
  let password = config.demo.adminPassword;
  if (!password) {
    const file = path.join(config.database.dataDir, 'admin-password.txt');
    if (existsSync(file)) {
      password = (await readFile(file, 'utf8')).trim();
    } else {
      password = randomBytes(12).toString('base64url');
      await mkdir(config.database.dataDir, { recursive: true });
      await writeFile(file, `${password}\n`, { mode: 0o600 });
    }
  }
  await upsertUser(db, { username, password, isStaff: true });
  return { username, password };
}
