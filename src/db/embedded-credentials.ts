import path from 'node:path';
import { persistedLocalSecret } from '../secrets/local-secret';

/** The superuser of an embedded cluster; its password is generated once and kept beside the cluster. */
export const EMBEDDED_SUPERUSER = 'postgres';

/** `<parent>/<cluster folder>-password.txt` (mode 0600): DATA_DIR/postgres-password.txt for the start command. */
export function embeddedPasswordFile(clusterDir: string): string {
  const resolved = path.resolve(clusterDir);
  return path.join(path.dirname(resolved), `${path.basename(resolved)}-password.txt`);
}

/** The superuser password of the cluster in `clusterDir`, generated on first use. */
export function embeddedPassword(clusterDir: string): Promise<string> {
  const file = embeddedPasswordFile(clusterDir);
  return persistedLocalSecret(path.dirname(file), path.basename(file, '.txt'), 24);
}

export function embeddedConnectionString(password: string, port: number, database = 'postgres'): string {
  return `postgres://${EMBEDDED_SUPERUSER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}
