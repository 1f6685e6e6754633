import { randomBytes } from 'node:crypto';
import { chmod, link, mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseSecretsKeys, type SecretKey } from './keyring';

const OWNER_ONLY = 0o600;

/** Writes the file whole under another name and links it into place, which fails if it exists meanwhile. */
async function createExclusively(file: string, content: string): Promise<void> {
  const draft = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(draft, content, { mode: OWNER_ONLY, flag: 'wx' });
  try {
    await link(draft, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await rm(draft, { force: true });
  }
}

/**
 * The content of a file that `generate` writes on the first use (mode 0600, its folder 0700 when this creates it).
 * Processes starting at once all read the one content written first, never a half-written file.
 */
export async function persistedGeneratedFile(file: string, generate: () => string): Promise<string> {
  await mkdir(path.dirname(file), { recursive: true, mode: 0o700 });
  const existing = await stat(file).catch(() => undefined);
  if (!existing) await createExclusively(file, generate());
  // Kept from an earlier start: make sure no one else can read it, whatever created it.
  else if ((existing.mode & 0o077) !== 0) await chmod(file, OWNER_ONLY);
  return readFile(file, 'utf8');
}

/**
 * A secret generated on the first local start and kept in the data folder (mode 0600, the folder 0700 when this
 * creates it), so that the embedded default keeps the same demo password, token key, secrets key and database
 * password across restarts. Never used in production.
 */
export async function persistedLocalSecret(dataDir: string, name: string, bytes = 24): Promise<string> {
  const content = await persistedGeneratedFile(path.join(dataDir, `${name}.txt`), () => `${randomBytes(bytes).toString('base64url')}\n`);
  return content.trim();
}

/** SECRETS_KEYS of the embedded default when it is not set: one key, generated into DATA_DIR on first use. */
export async function localSecretsKeys(dataDir: string): Promise<SecretKey[]> {
  return parseSecretsKeys(await persistedLocalSecret(dataDir, 'secrets-key', 32));
}
