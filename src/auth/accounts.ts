import type { Db } from '../db/knex';
import { dummyPasswordHash, hashPassword, verifyPassword } from './passwords';
import { findUserWithPasswordHash, insertOrResetUser, insertUserUnlessTaken, updateUser, type User, type UserWithPasswordHash } from '../users/user-store';

/*
 * Account changes and the password check. A change that takes something away (password, activation, staff
 * permission) ends every session of the user: src/users/user-store.ts raises its token version.
 */

/**
 * Creates the user, or resets password and staff flag of an existing one and re-activates it (demo seeding and test
 * fixtures; operators use the `users` command, which says what it changes). A reset ends the user's sessions.
 */
export async function upsertUser(
  db: Db,
  { username, password, isStaff }: { username: string; password: string; isStaff: boolean },
): Promise<User> {
  return insertOrResetUser(db, { username, password_hash: await hashPassword(password), is_staff: isStaff });
}

/** A new active user; undefined when the name is taken (nothing is changed then). */
export async function createUser(
  db: Db,
  { username, password, isStaff }: { username: string; password: string; isStaff: boolean },
): Promise<User | undefined> {
  return insertUserUnlessTaken(db, { username, password_hash: await hashPassword(password), is_staff: isStaff });
}

/** A new password, which ends every session of the user. */
export async function setPassword(db: Db, username: string, password: string): Promise<User | undefined> {
  return updateUser(db, username, { password_hash: await hashPassword(password) }, true);
}

/** Deactivating ends every session of the user; activating lets it sign in again (old tokens stay refused). */
export async function setActive(db: Db, username: string, active: boolean): Promise<User | undefined> {
  return updateUser(db, username, { is_active: active }, !active);
}

/** Removing staff permission ends every session of the user, so no token keeps a permission it no longer has. */
export async function setStaff(db: Db, username: string, staff: boolean): Promise<User | undefined> {
  return updateUser(db, username, { is_staff: staff }, !staff);
}

/** The account without its password hash, which never leaves src/auth/. */
export function withoutPasswordHash({ password_hash: _hash, ...user }: UserWithPasswordHash): User {
  return user;
}

/**
 * The active account with this username and password, hash included (for src/auth/ only), or undefined; always
 * spends one KDF run so timing does not leak.
 */
export async function findAccountByCredentials(db: Db, username: string, password: string): Promise<UserWithPasswordHash | undefined> {
  // Postgres text cannot hold NUL: such a name cannot exist, and sending it would fail the query.
  const row = username.includes('\0') ? undefined : await findUserWithPasswordHash(db, username);
  const valid = await verifyPassword(password, row?.password_hash ?? (await dummyPasswordHash()));
  return row && valid && row.is_active ? row : undefined;
}

/** The user for a username and password, or undefined; always spends one KDF run so timing does not leak. */
export async function verifyCredentials(db: Db, username: string, password: string): Promise<User | undefined> {
  const account = await findAccountByCredentials(db, username, password);
  return account && withoutPasswordHash(account);
}
