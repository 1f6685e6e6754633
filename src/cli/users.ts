import type { Readable } from 'node:stream';
import { findUserByName, listUsers, type User } from '../users/user-store';
import { createUser, setActive, setPassword, setStaff } from '../auth/accounts';
import { loadConfig } from '../config';
import type { Db } from '../db/knex';
import { withDatabase } from './database';
import { type CliIo, runAsMain } from './io';

/*
 * npm run users -- create|set-password|deactivate|activate|set-staff|list
 * Accounts of the API, staff or not. Passwords come from STAFF_PASSWORD or the first line of standard input, never
 * from the command line (where `ps` and shell histories would show them). Every command says what it changed;
 * changing a password, deactivating and removing staff permission end the user's sessions (src/auth/accounts.ts).
 */

export const USAGE = `Usage: npm run users -- <command>
  create <username> [--staff]    a new active account (password from STAFF_PASSWORD or standard input)
  set-password <username>        a new password (from STAFF_PASSWORD or standard input); ends its sessions
  deactivate <username>          the account can no longer sign in; ends its sessions
  activate <username>            the account can sign in again
  set-staff <username> yes|no    staff permission; "no" ends its sessions
  list                           every account`;

const MIN_PASSWORD_LENGTH = 8;
// What POST /authentication/create accepts (src/api/tokens/token-operations.ts); longer could never be used there.
const MAX_PASSWORD_LENGTH = 4096;
const MAX_USERNAME_LENGTH = 150;

const EXIT = { done: 0, refused: 1, usage: 2 } as const;

interface Outcome {
  code: number;
  message: string;
}
const done = (message: string): Outcome => ({ code: EXIT.done, message });
const refused = (message: string): Outcome => ({ code: EXIT.refused, message });
const usage = (message: string): Outcome => ({ code: EXIT.usage, message: `${message}\n${USAGE}` });

async function firstLine(input: Readable): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += chunk.toString();
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0];
}

/** A user name the API can take: what /authentication/create accepts, and no option by mistake. */
function usernameProblem(username: string | undefined): string | undefined {
  if (!username) return 'A user name is required.';
  if (username.startsWith('-')) return `"${username}" looks like an option, not a user name.`;
  if (/\p{Cc}/u.test(username)) return 'A user name cannot contain control characters.';
  if (username.length > MAX_USERNAME_LENGTH) return `A user name has at most ${MAX_USERNAME_LENGTH} characters.`;
  return undefined;
}

async function readPassword({ config, stdin }: CliIo): Promise<{ password: string } | { problem: string }> {
  const password = config.cli.staffPassword ?? (await firstLine(stdin));
  if (password.length < MIN_PASSWORD_LENGTH) return { problem: `The password must have at least ${MIN_PASSWORD_LENGTH} characters.` };
  if (password.length > MAX_PASSWORD_LENGTH) return { problem: `The password must have at most ${MAX_PASSWORD_LENGTH} characters.` };
  return { password };
}

const describe = (user: User) => `"${user.username}" (id ${user.id}, ${user.is_staff ? 'staff' : 'not staff'}${user.is_active ? '' : ', deactivated'})`;
const noSuchUser = (username: string) => refused(`No user "${username}"; nothing changed.`);

type Command = (db: Db, username: string, io: CliIo, options: string[]) => Promise<Outcome>;

const COMMANDS: Record<string, { options: string[]; run: Command }> = {
  create: {
    options: ['--staff'],
    async run(db, username, io, options) {
      const password = await readPassword(io);
      if ('problem' in password) return usage(password.problem);
      const user = await createUser(db, { username, password: password.password, isStaff: options.includes('--staff') });
      if (!user) {
        const existing = await findUserByName(db, username);
        return refused(
          `User ${existing ? describe(existing) : `"${username}"`} already exists; nothing changed. ` +
            'Use set-password, activate or set-staff to change it.',
        );
      }
      return done(`Created user ${describe(user)}.`);
    },
  },
  'set-password': {
    options: [],
    async run(db, username, io) {
      const password = await readPassword(io);
      if ('problem' in password) return usage(password.problem);
      const user = await setPassword(db, username, password.password);
      if (!user) return noSuchUser(username);
      const stillDeactivated = user.is_active ? '' : ' It stays deactivated until you activate it.';
      return done(`Changed the password of ${describe(user)}; its sessions have ended.${stillDeactivated}`);
    },
  },
  deactivate: {
    options: [],
    async run(db, username) {
      const existing = await findUserByName(db, username);
      if (!existing) return noSuchUser(username);
      if (!existing.is_active) return done(`${describe(existing)} is already deactivated; nothing changed.`);
      const user = (await setActive(db, username, false))!;
      return done(`Deactivated ${describe(user)}; its sessions have ended.`);
    },
  },
  activate: {
    options: [],
    async run(db, username) {
      const existing = await findUserByName(db, username);
      if (!existing) return noSuchUser(username);
      if (existing.is_active) return done(`${describe(existing)} is already active; nothing changed.`);
      const user = (await setActive(db, username, true))!;
      return done(`Activated ${describe(user)}; it can sign in again.`);
    },
  },
  'set-staff': {
    options: ['yes', 'no'],
    async run(db, username, _io, options) {
      if (options.length !== 1) return usage('set-staff needs yes or no.');
      const staff = options[0] === 'yes';
      const existing = await findUserByName(db, username);
      if (!existing) return noSuchUser(username);
      if (existing.is_staff === staff) return done(`${describe(existing)} is unchanged.`);
      const user = (await setStaff(db, username, staff))!;
      return done(staff ? `${describe(user)} is now staff.` : `${describe(user)} is no longer staff; its sessions have ended.`);
    },
  },
};

async function list(db: Db): Promise<Outcome> {
  const users = await listUsers(db);
  if (users.length === 0) return done('No users.');
  const rows = users.map((user) => [
    user.username,
    user.is_staff ? 'staff' : '-',
    user.is_active ? 'active' : 'deactivated',
    user.created_at.toISOString(),
  ]);
  const table = [['username', 'staff', 'status', 'created'], ...rows];
  const widths = table[0].map((_, column) => Math.max(...table.map((row) => row[column].length)));
  return done(table.map((row) => row.map((cell, column) => cell.padEnd(widths[column])).join('  ').trimEnd()).join('\n'));
}

async function dispatch(io: CliIo): Promise<Outcome> {
  const [name, username, ...options] = io.argv;
  if (name === 'list') return io.argv.length === 1 ? withDatabase(io.config, list) : usage('list takes no arguments.');
  if (name === undefined || !Object.hasOwn(COMMANDS, name)) {
    return usage(name === undefined ? 'A command is required.' : `Unknown command "${name}".`);
  }
  const command = COMMANDS[name];
  const problem = usernameProblem(username);
  if (problem) return usage(problem);
  // Not echoed: it may be a password typed on the command line.
  if (options.some((option) => !command.options.includes(option))) {
    return usage('Unexpected argument; passwords come from STAFF_PASSWORD or standard input, never from the command line.');
  }
  return withDatabase(io.config, (db) => command.run(db, username, io, options));
}

/** Returns the exit code: 0 done (also when nothing needed changing), 1 refused (unknown or existing user), 2 usage. */
export async function usersCommand(io: CliIo): Promise<number> {
  const outcome = await dispatch(io);
  io.stdout(outcome.message);
  return outcome.code;
}

if (require.main === module) runAsMain('users', usersCommand, () => loadConfig());
