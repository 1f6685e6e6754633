import { findUserByName } from '../../src/users/user-store';
import { upsertUser, verifyCredentials } from '../../src/auth/accounts';
import { USAGE, usersCommand } from '../../src/cli/users';
import type { Db } from '../../src/db/knex';
import { startTestApp, type TestApp } from '../support/test-app';
import { runCli } from './run-cli';

/*
 * `npm run users -- …` against the database of a running API, so that the tests can show what each command does to
 * sessions already open there.
 */

let app: TestApp;
let db: Db;
let url: string;

beforeAll(async () => {
  app = await startTestApp();
  db = app.db;
  url = app.databaseUrl;
});
afterAll(async () => {
  await app?.close();
});

const run = (argv: string[], options?: { env?: Record<string, string>; stdin?: string }) => runCli(usersCommand, url, argv, options);
const PASSWORD = { env: { STAFF_PASSWORD: 'Napf-1408-Emmental' } };

/** A Bearer session of the user, opened at the API. */
async function sessionOf(username: string, password: string) {
  const response = await app.anonymous.post('/authentication/create', { username, password });
  expect(response.status).toBe(200);
  const { access } = (await response.json()) as { access: string };
  return async () => (await app.anonymous.post('/authentication/verify', { token: access })).status;
}

test('create: staff or not, never over an existing account', async () => {
  expect(await run(['create', 'redakteurin'], PASSWORD)).toEqual({
    code: 0,
    output: expect.stringMatching(/^Created user "redakteurin" \(id \d+, not staff\)\.$/),
  });
  expect(await run(['create', 'leitung', '--staff'], { stdin: 'Niesen-2362-Spiez\n' })).toMatchObject({ code: 0 });
  expect(await findUserByName(db, 'redakteurin')).toMatchObject({ is_staff: false, is_active: true });
  expect(await verifyCredentials(db, 'leitung', 'Niesen-2362-Spiez')).toMatchObject({ is_staff: true });

  const again = await run(['create', 'redakteurin', '--staff'], { env: { STAFF_PASSWORD: 'anderes-Passwort' } });
  expect(again.code).toBe(1);
  expect(again.output).toMatch(/already exists; nothing changed/);
  expect(await findUserByName(db, 'redakteurin')).toMatchObject({ is_staff: false });
  expect(await verifyCredentials(db, 'redakteurin', 'anderes-Passwort')).toBeUndefined();
});

test('set-password: the new password signs in, the old one and every open session do not', async () => {
  await upsertUser(db, { username: 'wechsel', password: 'altes-Passwort-1', isStaff: true });
  const session = await sessionOf('wechsel', 'altes-Passwort-1');
  expect(await session()).toBe(200);
  const { code, output } = await run(['set-password', 'wechsel'], { stdin: 'neues-Passwort-2\n' });
  expect([code, output]).toEqual([0, expect.stringMatching(/^Changed the password of "wechsel" .*; its sessions have ended\.$/)]);
  expect(await session()).toBe(401);
  expect(await verifyCredentials(db, 'wechsel', 'altes-Passwort-1')).toBeUndefined();
  expect(await verifyCredentials(db, 'wechsel', 'neues-Passwort-2')).toBeDefined();
});

test('deactivate ends the sessions; activate lets the account sign in again; each says what it did', async () => {
  await upsertUser(db, { username: 'praktikant', password: 'Praktikum-2025', isStaff: false });
  const session = await sessionOf('praktikant', 'Praktikum-2025');
  expect(await run(['deactivate', 'praktikant'])).toEqual({
    code: 0,
    output: expect.stringMatching(/^Deactivated "praktikant" .*; its sessions have ended\.$/),
  });
  expect(await session()).toBe(401);
  expect((await app.anonymous.post('/authentication/create', { username: 'praktikant', password: 'Praktikum-2025' })).status).toBe(401);
  expect((await run(['deactivate', 'praktikant'])).output).toMatch(/is already deactivated; nothing changed/);

  expect((await run(['activate', 'praktikant'])).output).toMatch(/^Activated "praktikant" .*; it can sign in again\.$/);
  expect(await session()).toBe(401);
  expect((await app.anonymous.post('/authentication/create', { username: 'praktikant', password: 'Praktikum-2025' })).status).toBe(200);
  expect((await run(['activate', 'praktikant'])).output).toMatch(/is already active; nothing changed/);
});

test('set-staff no ends the sessions; set-staff yes does not', async () => {
  await upsertUser(db, { username: 'teamleitung', password: 'Teamleitung-1', isStaff: true });
  const staffSession = await sessionOf('teamleitung', 'Teamleitung-1');
  expect((await run(['set-staff', 'teamleitung', 'no'])).output).toMatch(/is no longer staff; its sessions have ended\.$/);
  expect(await staffSession()).toBe(401);
  const plainSession = await sessionOf('teamleitung', 'Teamleitung-1');
  expect((await run(['set-staff', 'teamleitung', 'yes'])).output).toMatch(/is now staff\.$/);
  expect(await plainSession()).toBe(200);
  expect((await run(['set-staff', 'teamleitung', 'yes'])).output).toMatch(/is unchanged\.$/);
  expect((await run(['set-staff', 'teamleitung'])).code).toBe(2);
  expect((await run(['set-staff', 'teamleitung', 'vielleicht'])).code).toBe(2);
});

test('list shows every account, staff or not, active or not, and no password hash', async () => {
  const { code, output } = await run(['list']);
  expect(code).toBe(0);
  const lines = output.split('\n');
  expect(lines[0]).toMatch(/^username\s+staff\s+status\s+created$/);
  expect(lines.find((line) => line.startsWith('praktikant '))).toMatch(/^praktikant\s+-\s+active\s+\d{4}-/);
  expect(lines.find((line) => line.startsWith('redakteurin '))).toMatch(/^redakteurin\s+-\s+active/);
  expect(lines.find((line) => line.startsWith('leitung '))).toMatch(/^leitung\s+staff\s+active/);
  expect(output).not.toContain('scrypt');
});

test('unknown users, commands and arguments are refused without touching anything; passwords never come from argv', async () => {
  for (const command of ['set-password', 'deactivate', 'activate']) {
    expect(await run([command, 'niemand'], PASSWORD)).toEqual({ code: 1, output: 'No user "niemand"; nothing changed.' });
  }
  expect((await run(['set-staff', 'niemand', 'yes'])).code).toBe(1);
  expect(await run([])).toEqual({ code: 2, output: `A command is required.\n${USAGE}` });
  expect((await run(['delete', 'leitung'])).code).toBe(2);
  expect((await run(['list', 'extra'])).code).toBe(2);
  for (const username of ['--staff', '', 'tab\tname', 'x'.repeat(151)]) {
    expect((await run(['create', username], PASSWORD)).code).toBe(2);
  }
  const inArgv = await run(['create', 'jemand', 'Passwort-im-argv']);
  expect(inArgv.code).toBe(2);
  expect(inArgv.output).not.toContain('Passwort-im-argv');
  expect((await run(['create', 'zu-lang'], { env: { STAFF_PASSWORD: 'x'.repeat(4097) } })).code).toBe(2);
  expect(await findUserByName(db, 'jemand')).toBeUndefined();
  expect(await findUserByName(db, 'zu-lang')).toBeUndefined();
});
