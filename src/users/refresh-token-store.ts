import type { Db } from '../db/knex';

/*
 * The blocked refresh tokens (table `refresh_token_blacklist`): the only module that queries it. Entries are kept
 * until the token would have expired anyway.
 */

const BLACKLIST = 'refresh_token_blacklist';

export interface BlacklistEntry {
  jti: string;
  user_id: number;
  expires_at: Date;
}

/** Removes the entries of tokens that have expired by `now`: they are refused for their expiry alone. */
export async function removeExpiredEntries(db: Db, now: Date): Promise<void> {
  await db(BLACKLIST).where('expires_at', '<', now).delete();
}

/** Adds the token; false when it was there already. The insert is the check, so of two concurrent adds one wins. */
export async function addToBlacklist(db: Db, entry: BlacklistEntry): Promise<boolean> {
  const inserted = await db(BLACKLIST).insert(entry).onConflict('jti').ignore().returning('jti');
  return inserted.length === 1;
}

export async function isBlacklisted(db: Db, jti: string): Promise<boolean> {
  return (await db(BLACKLIST).first('jti').where({ jti })) !== undefined;
}
