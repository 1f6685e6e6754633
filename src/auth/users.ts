import type { Db } from '../db/knex';
import { dummyPasswordHash, hashPassword, verifyPassword } from './passwords';

export interface User {
  id: number;
  username: string;
  is_staff: boolean;
  is_active: boolean;
  /** Carried in every token; raising it ends every session of the user (see `endSessions`). */
  token_version: number;
}

export interface UserListing extends User {
  created_at: Date;
}

const USER_COLUMNS = ['id', 'username', 'is_staff', 'is_active', 'token_version'] as const;

/** Raises the token version: every token issued before is refused from now on, by every API process. */
const endSessions = (db: Db) => ({ token_version: db.raw('users.token_version + 1') });

/**
 * Creates the user, or resets password and staff flag of an existing one and re-activates it (demo seeding and test
 * fixtures; operators use the `users` command, which says what it changes). A reset ends the user's sessions.
 */
export async function upsertUser(
  db: Db,
  { username, password, isStaff }: { username: string; password: string; isStaff: boolean },
): Promise<User> {
  const password_hash = await hashPassword(password);
  const [user] = await db('users')
    .insert({ username, password_hash, is_staff: isStaff, is_active: true })
    .onConflict('username')
    .merge({ password_hash, is_staff: isStaff, is_active: true, ...endSessions(db) })
    .returning(USER_COLUMNS);
  return user as User;
}

/** A new active user; undefined when the name is taken (nothing is changed then). */
export async function createUser(
  db: Db,
  { username, password, isStaff }: { username: string; password: string; isStaff: boolean },
): Promise<User | undefined> {
  const password_hash = await hashPassword(password);
  const [user] = await db('users')
    .insert({ username, password_hash, is_staff: isStaff, is_active: true })
    .onConflict('username')
    .ignore()
    .returning(USER_COLUMNS);
  return user as User | undefined;
}

export async function findUserByName(db: Db, username: string): Promise<User | undefined> {
  return db('users').select(USER_COLUMNS).where({ username }).first();
}

export async function listUsers(db: Db): Promise<UserListing[]> {
  return db('users').select([...USER_COLUMNS, 'created_at']).orderBy('username');
}

/** A new password, which ends every session of the user. */
export async function setPassword(db: Db, username: string, password: string): Promise<User | undefined> {
  const password_hash = await hashPassword(password);
  const [user] = await db('users').where({ username }).update({ password_hash, ...endSessions(db) }).returning(USER_COLUMNS);
  return user as User | undefined;
}

/** Deactivating ends every session of the user; activating lets it sign in again (old tokens stay refused). */
export async function setActive(db: Db, username: string, active: boolean): Promise<User | undefined> {
  const [user] = await db('users')
    .where({ username })
    .update({ is_active: active, ...(active ? {} : endSessions(db)) })
    .returning(USER_COLUMNS);
  return user as User | undefined;
}

/** Removing staff permission ends every session of the user, so no token keeps a permission it no longer has. */
export async function setStaff(db: Db, username: string, staff: boolean): Promise<User | undefined> {
  const [user] = await db('users')
    .where({ username })
    .update({ is_staff: staff, ...(staff ? {} : endSessions(db)) })
    .returning(USER_COLUMNS);
  return user as User | undefined;
}

export async function findActiveUser(db: Db, id: number): Promise<User | undefined> {
  return db('users').select(USER_COLUMNS).where({ id, is_active: true }).first();
}

/** The user for a username and password, or undefined; always spends one KDF run so timing does not leak. */
export async function verifyCredentials(db: Db, username: string, password: string): Promise<User | undefined> {
  // Postgres text cannot hold NUL: such a name cannot exist, and sending it would fail the query.
  const row = username.includes('\0')
    ? undefined
    : await db('users').select([...USER_COLUMNS, 'password_hash']).where({ username }).first();
  const valid = await verifyPassword(password, row?.password_hash ?? (await dummyPasswordHash()));
  if (!row || !valid || !row.is_active) return undefined;
  const { password_hash: _hash, ...user } = row;
  return user as User;
}
