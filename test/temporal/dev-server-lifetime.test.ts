import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startDevServer, type DevServerExit } from '../../src/temporal/dev-server';
import { eventually } from '../support/eventually';
import { freePort } from '../support/free-port';
import { processesMentioning } from '../support/processes';
import { finished, spawnTypeScript } from '../support/typescript-process';

/*
 * The embedded default's Temporal dev server is a child that ends with the process that started it, however that
 * process ends, and a start never settles for a server it did not start itself (docs/embedded-default.md).
 */

const FIXTURE = path.join(__dirname, '..', 'fixtures', 'dev-server-process.ts');

let root: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), 'dev-server-lifetime-'));
});
afterAll(async () => {
  for (const { pid } of processesMentioning(root)) process.kill(pid, 'SIGKILL');
  await rm(root, { recursive: true, force: true });
});

/** Whether anything accepts connections on 127.0.0.1:port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** The dev server's own processes: those running on its state file (the fixture itself only names the folder). */
const serversOn = (dataDir: string) => processesMentioning(path.join(dataDir, 'temporal.sqlite'));

test.each([
  ['process.exit()', 'exit'],
  ['an uncaught exception', 'throw'],
  ['an unhandled rejection', 'reject'],
  ['SIGKILL, which no handler sees', 'wait'],
])('the dev server ends with the process that started it: %s', async (_, ending) => {
  const dataDir = path.join(root, ending);
  const port = await freePort();
  const child = spawnTypeScript(FIXTURE, [dataDir, String(port), String(await freePort()), ending]);
  const exited = finished(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
    void exited.then(({ stderr }) => reject(new Error(`the fixture ended before its server was ready: ${stderr}`)));
  });
  expect(serversOn(dataDir)).toHaveLength(1);
  if (ending === 'wait') child.kill('SIGKILL');
  else child.stdin?.end();
  await exited;
  await eventually(async () => serversOn(dataDir).length === 0 && !(await listening(port)), { what: 'the dev server to end' });
}, 60_000);

test('the dev server starts beside the service\'s OTEL_* settings, which it is not given (it refuses `console`)', async () => {
  const dataDir = path.join(root, 'traced');
  const env = { ...process.env, OTEL_TRACES_EXPORTER: 'console', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1' };
  const child = spawnTypeScript(FIXTURE, [dataDir, String(await freePort()), String(await freePort()), 'exit'], env);
  const exited = finished(child);
  const started = await new Promise<boolean>((resolve) => {
    child.stdout?.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve(true));
    void exited.then(() => resolve(false));
  });
  child.stdin?.end();
  expect([started, started || (await exited).stderr]).toEqual([true, true]);
  await exited;
}, 60_000);

test('a port another process listens on fails the start, naming the port and its setting, before anything starts', async () => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  const port = (blocker.address() as net.AddressInfo).port;
  try {
    const dataDir = path.join(root, 'taken');
    const result = await finished(spawnTypeScript(FIXTURE, [dataDir, String(port), String(await freePort()), 'wait']));
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain(`Port ${port} (TEMPORAL_DEV_SERVER_PORT) is taken by another process`);
    expect(serversOn(dataDir)).toEqual([]);
  } finally {
    blocker.close();
  }
}, 60_000);

test('a server that ends by itself is reported; one stopped by stop() is not', async () => {
  const exits: DevServerExit[] = [];
  const start = async (name: string) =>
    startDevServer({
      dataDir: path.join(root, name),
      port: await freePort(),
      uiPort: await freePort(),
      namespace: 'default',
      cliPath: process.env.TEMPORAL_CLI_PATH,
      onUnexpectedExit: (exit) => exits.push(exit),
    });
  const crashing = await start('crashing');
  process.kill(crashing.pid!, 'SIGKILL');
  await eventually(async () => exits.length > 0, { what: 'the report of the ended server' });
  expect(exits).toEqual([{ code: null, signal: 'SIGKILL' }]);

  const stopped = await start('stopped');
  await stopped.stop();
  expect(serversOn(path.join(root, 'stopped'))).toEqual([]);
  expect(exits).toHaveLength(1);
}, 60_000);
