import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * A secret generated on the first local start and kept in the data folder (readable by its owner only), so that
 * the embedded default keeps the same demo password and token key across restarts. Never used in production.
 */
export async function persistedLocalSecret(dataDir: string, name: string, bytes = 24): Promise<string> {
  const file = path.join(dataDir, `${name}.txt`);
  if (existsSync(file)) return (await readFile(file, 'utf8')).trim();
  const secret = randomBytes(bytes).toString('base64url');
  await mkdir(dataDir, { recursive: true });
  await writeFile(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}
