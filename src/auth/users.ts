import type { Db } from '../db/knex';
import { dummyPasswordHash, hashPassword, verifyPassword } from './passwords';

export interface User {
  id: number;
  username: string;
  is_staff: boolean;
  is_active: boolean;
}

const USER_COLUMNS = ['id', 'username', 'is_staff', 'is_active'] as const;

/** Creates the user, or resets the password and staff flag of an existing one (so seeding can run every start). */
export async function upsertUser(
  db: Db,
  { username, password, isStaff }: { username: string; password: string; isStaff: boolean },
): Promise<User> {
  const password_hash = await hashPassword(password);
  const [user] = await db('users')
    .insert({ username, password_hash, is_staff: isStaff, is_active: true })
    .onConflict('username')
    .merge(['password_hash', 'is_staff', 'is_active'])
    .returning(USER_COLUMNS);
  return user as User;
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
