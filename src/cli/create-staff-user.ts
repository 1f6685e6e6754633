import type { Readable } from 'node:stream';
import { upsertUser } from '../auth/users';
import { type Config, loadConfig } from '../config';
import { migrateToLatest } from '../db/knex';
import { openDatabase } from './database';

/*
 * npm run create-staff-user -- <username>
 * Creates a staff user, or resets the password of an existing one and makes it staff. The password comes from
 * STAFF_PASSWORD or the first line of standard input, never from the command line (where `ps` and shell
 * histories would show it).
 */

const MIN_PASSWORD_LENGTH = 8;

export interface CliIo {
  argv: string[];
  config: Config;
  stdin: Readable;
  stdout: (line: string) => void;
}

async function firstLine(input: Readable): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += chunk.toString();
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0];
}

/** Returns the exit code. */
export async function createStaffUser({ argv, config, stdin, stdout }: CliIo): Promise<number> {
  const [username, ...extra] = argv;
  if (!username || extra.length > 0 || username.startsWith('-')) {
    stdout('Usage: npm run create-staff-user -- <username>   (password from STAFF_PASSWORD or standard input)');
    return 2;
  }
  const password = config.cli.staffPassword ?? (await firstLine(stdin));
  if (password.length < MIN_PASSWORD_LENGTH) {
    stdout(`The password must have at least ${MIN_PASSWORD_LENGTH} characters.`);
    return 2;
  }
  const { db, close } = await openDatabase(config);
  try {
    await migrateToLatest(db);
    const user = await upsertUser(db, { username, password, isStaff: true });
    stdout(`Staff user "${user.username}" (id ${user.id}) is ready.`);
    return 0;
  } finally {
    await close();
  }
}

if (require.main === module) {
  const exit = (code: number) => process.exit(code);
  const fail = (err: unknown) => {
    process.stderr.write(`create-staff-user failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  };
  Promise.resolve()
    .then(() =>
      createStaffUser({
        argv: process.argv.slice(2),
        config: loadConfig(),
        stdin: process.stdin,
        stdout: (line) => process.stdout.write(`${line}\n`),
      }),
    )
    .then(exit, fail);
}
