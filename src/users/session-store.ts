import type { Db } from '../db/knex';

/*
 * The sessions ended before their time (table `ended_sessions`): the only module that queries it. A session is a
 * sign-in and every refresh token rotated from it (claim `sid`); src/auth/refresh-tokens.ts decides when one ends.
 */

const ENDED_SESSIONS = 'ended_sessions';

export type SessionEndReason = 'logout' | 'refresh_token_reused';

export interface EndedSession {
  session_id: string;
  user_id: number;
  reason: SessionEndReason;
  ended_at: Date;
  /** When every token of the session has expired anyway: the row is no longer needed after that. */
  expires_at: Date;
}

/** Records the end; a session ended before keeps its first reason. */
export async function recordSessionEnd(db: Db, session: EndedSession): Promise<void> {
  await db(ENDED_SESSIONS).insert(session).onConflict('session_id').ignore();
}

export async function isSessionEnded(db: Db, sessionId: string): Promise<boolean> {
  return (await db(ENDED_SESSIONS).first('session_id').where({ session_id: sessionId })) !== undefined;
}

/** Removes the records of sessions whose tokens have all expired by `now`. */
export async function removeExpiredSessionEnds(db: Db, now: Date): Promise<void> {
  await db(ENDED_SESSIONS).where('expires_at', '<', now).delete();
}
