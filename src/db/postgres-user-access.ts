import { execFile } from 'node:child_process';
import { chmod, stat } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

/** Who may pass through a folder: its mode and owner, and the user and groups asking. */
export function traversableBy(who: { uid: number; gids: number[] }, folder: { mode: number; uid: number; gid: number }): boolean {
  if (folder.uid === who.uid) return (folder.mode & 0o100) !== 0;
  if (who.gids.includes(folder.gid)) return (folder.mode & 0o010) !== 0;
  return (folder.mode & 0o001) !== 0;
}

/** The `postgres` user, or, when the package has yet to create it, a new user that only "others" rights reach. */
async function postgresUser(): Promise<{ uid: number; gids: number[] }> {
  const id = async (flag: string) => (await promisify(execFile)('id', [flag, 'postgres'])).stdout.trim().split(/\s+/).map(Number);
  try {
    return { uid: (await id('-u'))[0], gids: await id('-G') };
  } catch {
    return { uid: -1, gids: [] };
  }
}

/**
 * As root, Postgres runs as the user `postgres`, which must pass through every folder above its cluster. The
 * cluster's own parent (DATA_DIR) belongs to this service and is opened for passing through (not for listing);
 * a folder further up is not ours to change, so the start is refused, naming it.
 */
export async function letPostgresReach(databaseDir: string): Promise<void> {
  const who = await postgresUser();
  const parent = path.dirname(databaseDir);
  const parentStat = await stat(parent);
  if (!traversableBy(who, parentStat)) await chmod(parent, (parentStat.mode & 0o7777) | 0o011);
  for (let folder = path.dirname(parent); ; folder = path.dirname(folder)) {
    const folderStat = await stat(folder);
    if (!traversableBy(who, folderStat)) {
      const mode = (folderStat.mode & 0o777).toString(8).padStart(4, '0');
      throw new Error(
        `Postgres runs as the user "postgres" here (this process runs as root), and it cannot pass through ${folder} ` +
          `(mode ${mode}) to reach ${databaseDir}. Choose a DATA_DIR outside ${folder}, or let others pass: chmod o+x ${folder}`,
      );
    }
    if (folder === path.dirname(folder)) return;
  }
}
