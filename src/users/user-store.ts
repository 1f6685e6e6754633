import type { Db } from '../db/knex';

/*
 * The API's accounts (table `users`): the only module that queries it. What a change means for the user's sessions
 * is decided by src/auth/accounts.ts; this module only knows how to raise the token version.
 */

const USERS = 'users';

export interface User {
  id: number;
  username: string;
  is_staff: boolean;
  is_active: boolean;
  /** Carried in every token; raising it ends every session of the user (`endSessions` below). */
  token_version: number;
}

export interface UserListing extends User {
  created_at: Date;
}

/** Only for checking a password: the hash never leaves src/auth/. */
export interface UserWithPasswordHash extends User {
  password_hash: string;
}

export interface NewUser {
  username: string;
  password_hash: string;
  is_staff: boolean;
}

export type UserChanges = Partial<Pick<UserWithPasswordHash, 'password_hash' | 'is_staff' | 'is_active'>>;

const USER_COLUMNS = ['id', 'username', 'is_staff', 'is_active', 'token_version'] as const;

/** Raises the token version: every token issued before is refused from now on, by every API process. */
const endSessions = (db: Db) => ({ token_version: db.raw(`${USERS}.token_version + 1`) });

/** Inserts the user active, or resets password and staff flag of the existing one, re-activates it and ends its sessions. */
export async function insertOrResetUser(db: Db, user: NewUser): Promise<User> {
  const [row] = await db(USERS)
    .insert({ ...user, is_active: true })
    .onConflict('username')
    .merge({ password_hash: user.password_hash, is_staff: user.is_staff, is_active: true, ...endSessions(db) })
    .returning(USER_COLUMNS);
  return row as User;
}

/** Inserts the user active; undefined when the name is taken (nothing is changed then). */
export async function insertUserUnlessTaken(db: Db, user: NewUser): Promise<User | undefined> {
  const [row] = await db(USERS)
    .insert({ ...user, is_active: true })
    .onConflict('username')
    .ignore()
    .returning(USER_COLUMNS);
  return row as User | undefined;
}

/** Changes the named user, raising its token version when `endsSessions`; undefined when there is no such user. */
export async function updateUser(db: Db, username: string, changes: UserChanges, endsSessions: boolean): Promise<User | undefined> {
  const [row] = await db(USERS)
    .where({ username })
    .update({ ...changes, ...(endsSessions ? endSessions(db) : {}) })
    .returning(USER_COLUMNS);
  return row as User | undefined;
}

export async function findUserByName(db: Db, username: string): Promise<User | undefined> {
  return db(USERS).select(USER_COLUMNS).where({ username }).first();
}

export async function findUserWithPasswordHash(db: Db, username: string): Promise<UserWithPasswordHash | undefined> {
  return db(USERS).select([...USER_COLUMNS, 'password_hash']).where({ username }).first();
}

export async function findActiveUser(db: Db, id: number): Promise<User | undefined> {
  return db(USERS).select(USER_COLUMNS).where({ id, is_active: true }).first();
}

export async function listUsers(db: Db): Promise<UserListing[]> {
  return db(USERS).select([...USER_COLUMNS, 'created_at']).orderBy('username');
}
