import { chmod, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { localSecretsKeys, persistedLocalSecret } from '../../src/secrets/local-secret';

const modeOf = async (file: string) => (await stat(file)).mode & 0o777;
const made: string[] = [];
const tempDir = async () => {
  made.push(await mkdtemp(path.join(os.tmpdir(), 'local-secret-')));
  return made[made.length - 1];
};
afterAll(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));

test('a local secret is generated once into a new 0700 folder, mode 0600, and read back on later starts', async () => {
  const dataDir = path.join(await tempDir(), 'data');
  const first = await persistedLocalSecret(dataDir, 'jwt-secret', 32);
  expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(await persistedLocalSecret(dataDir, 'jwt-secret', 32)).toBe(first);
  expect(await modeOf(dataDir)).toBe(0o700);
  expect(await modeOf(path.join(dataDir, 'jwt-secret.txt'))).toBe(0o600);
});

test('processes starting at once all get the one secret that was written first, and no draft is left behind', async () => {
  const dataDir = await tempDir();
  const keys = await Promise.all(Array.from({ length: 8 }, () => localSecretsKeys(dataDir)));
  expect(new Set(keys.map(([key]) => key.key.toString('hex'))).size).toBe(1);
  expect(keys[0]).toHaveLength(1);
  expect(await readdir(dataDir)).toEqual(['secrets-key.txt']);
});

test('a kept secret that others could read is made owner-only', async () => {
  const dataDir = await tempDir();
  const file = path.join(dataDir, 'admin-password.txt');
  await writeFile(file, 'kept-password\n');
  await chmod(file, 0o644);
  expect(await persistedLocalSecret(dataDir, 'admin-password')).toBe('kept-password');
  expect(await modeOf(file)).toBe(0o600);
});
