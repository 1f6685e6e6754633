import { chmod, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startDevServer } from '../../src/temporal/dev-server';
import { freePort } from '../support/free-port';

/*
 * The dev server's SQLite file holds workflow histories and activity results of the embedded default: readable by
 * this user only, in a folder no one else can list, also when an earlier start left it open.
 */

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'dev-server-files-'));
  await chmod(root, 0o755);
});
afterAll(() => rm(root, { recursive: true, force: true }));

const modeOf = async (file: string) => (await stat(file)).mode & 0o777;

async function runOnce(dataDir: string): Promise<void> {
  const server = await startDevServer({ dataDir, port: await freePort(), uiPort: await freePort(), namespace: 'default' });
  await server.stop();
}

async function modes(dataDir: string): Promise<Record<string, number>> {
  const names = await readdir(dataDir);
  return Object.fromEntries(await Promise.all(names.map(async (name) => [name, await modeOf(path.join(dataDir, name))] as const)));
}

test('the state folder is 0700 and every file in it 0600, from the first start on and after a loose one', async () => {
  const dataDir = path.join(root, 'temporal');
  await runOnce(dataDir);
  expect(await modeOf(dataDir)).toBe(0o700);
  const first = await modes(dataDir);
  expect(Object.keys(first)).toContain('temporal.sqlite');
  expect((await stat(path.join(dataDir, 'temporal.sqlite'))).size).toBeGreaterThan(0);
  for (const [name, mode] of Object.entries(first)) expect([name, mode.toString(8)]).toEqual([name, '600']);

  // Left open by an earlier version: closed again at the next start.
  await chmod(dataDir, 0o755);
  await chmod(path.join(dataDir, 'temporal.sqlite'), 0o644);
  await runOnce(dataDir);
  expect(await modeOf(dataDir)).toBe(0o700);
  for (const [name, mode] of Object.entries(await modes(dataDir))) expect([name, mode.toString(8)]).toEqual([name, '600']);
}, 60_000);
