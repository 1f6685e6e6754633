// Where the page's tokens live: IndexedDB, one record per session, which every tab of this origin reads. Each read
// and write goes to the browser's one copy of the database, and a write counts as done once its transaction has
// completed: a tab that reads after another tab's write completed sees that write. (localStorage promises no such
// thing: each tab reads its own cached copy, which another tab's write reaches some time later.)

/** @import { Tokens } from './api-types' */

const DATABASE = 'webhook-admin';
const SESSIONS = 'sessions';

/** @type {Promise<IDBDatabase> | undefined} */
let opened;

function database() {
  opened ??= new Promise((resolve, reject) => {
    const request = indexedDB.open(DATABASE, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(SESSIONS);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
  return opened;
}

/**
 * One request in a transaction of its own: its result, once the transaction has completed.
 * @template T
 * @param {IDBTransactionMode} mode
 * @param {(store: IDBObjectStore) => IDBRequest<T>} operate
 * @returns {Promise<T>}
 */
async function transact(mode, operate) {
  const db = await database();
  return new Promise((resolve, reject) => {
    const transaction = db.transaction(SESSIONS, mode);
    const request = operate(transaction.objectStore(SESSIONS));
    transaction.oncomplete = () => resolve(request.result);
    transaction.onerror = () => reject(transaction.error);
    transaction.onabort = () => reject(transaction.error);
  });
}

/**
 * `{access, refresh}` of a session, or undefined.
 * @param {string} session
 * @returns {Promise<Tokens | undefined>}
 */
export const readTokens = (session) => transact('readonly', (store) => store.get(session));
/**
 * @param {string} session
 * @param {Tokens} tokens
 */
export const writeTokens = (session, tokens) => transact('readwrite', (store) => store.put(tokens, session));
/** @param {string} session */
export const deleteTokens = (session) => transact('readwrite', (store) => store.delete(session));
/** The sessions that have tokens here; their keys are the ids this page gives them. */
export const storedSessions = () => transact('readonly', (store) => /** @type {IDBRequest<string[]>} */ (store.getAllKeys()));
