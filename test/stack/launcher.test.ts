import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type ChildSpec, childProcess, jobProcess } from '../../stack/child-process';
import { launcher } from '../../stack/launcher';
import { isRunning } from '../../stack/process';

// The launcher under every topology the project runs outside `npm start` (the stack, the drills', the benchmarks'),
// on real processes: small node programs standing in for Postgres, Temporal and the roles.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'launcher-test-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A node program as a process of a topology: `code` runs, then it waits until it is stopped. */
function program(name: string, code: string, more: Partial<ChildSpec> = {}): ChildSpec {
  return {
    name,
    command: process.execPath,
    args: ['-e', `const fs = require('node:fs'); ${code}; setInterval(() => undefined, 1000);`],
    env: { STOPPED: path.join(dir, 'stopped.txt'), MARK: path.join(dir, `${name}.mark`) },
    stopGraceMs: 5_000,
    ...more,
  };
}

/** Notes its name in the shared file when SIGTERM stops it, and says it is ready. */
const notesItsStop = (name: string) =>
  program(name, `process.on('SIGTERM', () => { fs.appendFileSync(process.env.STOPPED, '${name}\\n'); process.exit(0); }); console.log('up')`, {
    ready: { logLine: 'up' },
  });

test('starts the steps in order, several together, and stops them in the reverse order of their first start', async () => {
  const processes = launcher();
  const [postgres, api, worker, proxy] = ['postgres', 'api', 'worker', 'proxy'].map((name) => childProcess(notesItsStop(name), { logDir: dir }));
  await processes.start(postgres, [api, worker], proxy);
  expect([...processes.pids().keys()]).toEqual(['postgres', 'api', 'worker', 'proxy']);
  await processes.get('api').stop();
  expect(isRunning(api)).toBe(false);
  // Started again, it keeps its place.
  await processes.start(api);
  await processes.stop();
  expect(readFileSync(path.join(dir, 'stopped.txt'), 'utf8').split('\n').filter(Boolean)).toEqual(['api', 'proxy', 'worker', 'api', 'postgres']);
  expect(processes.pids()).toEqual(new Map());
});

test('a process that ends during its start fails the start with its log, and what started before it is stopped', async () => {
  const processes = launcher();
  const first = childProcess(notesItsStop('postgres'), { logDir: dir });
  const failing = childProcess(program('api', `console.log('no database'); process.exit(3)`, { ready: { port: 1 } }), { logDir: dir });
  await expect(processes.start(first, failing)).rejects.toThrow(/^api exited during start \(code 3\)\n {2}no database\n/);
  await processes.stop();
  expect(readFileSync(path.join(dir, 'stopped.txt'), 'utf8')).toBe('postgres\n');
});

test('a restarted process is ready by what it logs in this run, not by the lines of its last run', async () => {
  // Says it is up on its first run only.
  const spec = program('relay', `if (!fs.existsSync(process.env.MARK)) { fs.writeFileSync(process.env.MARK, ''); console.log('up'); }`, {
    ready: { logLine: 'up' },
  });
  const relay = childProcess(spec, { logDir: dir, readyTimeoutMs: 1_000 });
  const processes = launcher();
  await processes.start(relay);
  await relay.stop();
  await expect(processes.start(relay)).rejects.toThrow(/^relay not ready after 1 s \(waiting for "up" in its log\)/);
  await processes.stop();
});

test('SIGTERM gives a process its grace period, then SIGKILL; it is not reported as ending by itself', async () => {
  const unexpected: string[] = [];
  const stubborn = childProcess(program('delivery', `process.on('SIGTERM', () => undefined); console.log('up')`, { ready: { logLine: 'up' }, stopGraceMs: 300 }), {
    logDir: dir,
    onUnexpectedExit: (code) => unexpected.push(`exit ${code}`),
  });
  await stubborn.start();
  await stubborn.ready();
  const since = Date.now();
  await stubborn.stop();
  expect(Date.now() - since).toBeGreaterThanOrEqual(300);
  expect(await stubborn.exited()).toBeNull();
  expect(unexpected).toEqual([]);
});

test('a process that ends by itself is reported, with its log', async () => {
  const reported: string[] = [];
  const crashing = childProcess(program('worker', `console.log('lost Temporal'); setTimeout(() => process.exit(1), 100)`), {
    logDir: dir,
    onUnexpectedExit: (code, tail) => reported.push(`${code}${tail}`),
  });
  await crashing.start();
  expect(await crashing.exited()).toBe(1);
  expect(reported).toEqual([expect.stringMatching(/^1\n {2}lost Temporal\n\(log: .*worker\.log\)$/)]);
  expect(isRunning(crashing)).toBe(false);
});

test('a one-off job must succeed: its failure stops the start, with its log', async () => {
  const processes = launcher();
  const migrate = jobProcess({ name: 'migrate', command: process.execPath, args: ['-e', `console.log('relation exists'); process.exit(2)`], env: {}, stopGraceMs: 0 }, dir);
  await expect(processes.start(migrate)).rejects.toThrow(/^migrate failed \(exit 2\)\n {2}relation exists\n/);
  const done = jobProcess({ name: 'schema', command: process.execPath, args: ['-e', 'process.exit(0)'], env: {}, stopGraceMs: 0 }, dir);
  await processes.start(done);
  expect(processes.pids()).toEqual(new Map());
  expect(existsSync(path.join(dir, 'schema.log'))).toBe(true);
  await processes.stop();
});
