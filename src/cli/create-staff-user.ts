import { loadConfig } from '../config';
import { type CliIo, runAsMain } from './io';
import { usersCommand } from './users';

/*
 * npm run create-staff-user -- <username>
 * Kept for existing scripts and runbooks: the same as `npm run users -- create <username> --staff`. It creates a new
 * staff account only; an existing account is left as it is (the message says so), so re-running it can neither
 * reset a password nor re-activate a deactivated account by surprise.
 */
export function createStaffUser(io: CliIo): Promise<number> {
  return usersCommand({ ...io, argv: io.argv.length === 0 ? ['create'] : ['create', ...io.argv, '--staff'] });
}

if (require.main === module) runAsMain('create-staff-user', createStaffUser, () => loadConfig());
