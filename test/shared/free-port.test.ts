import { readFileSync } from 'node:fs';
import net from 'node:net';
import { freePort, portIsFree } from '../../src/shared/free-port';

/*
 * A port handed to a server we start (a test's dev server UI, the SDK runtime's metrics) must not be handed to another
 * process asking for any free port in the meantime: a Temporal dev server picking its internal ports took such a port
 * once, and the start failed with "address already in use".
 */

const TIME_WAIT = '06';

/** The states of loopback TCP sockets on `port`, from the kernel's table (Linux). */
function socketStates(port: number): string[] {
  return readFileSync('/proc/net/tcp', 'utf8')
    .split('\n')
    .slice(1)
    .map((line) => line.trim().split(/\s+/))
    .filter(([, local]) => local !== undefined && parseInt(local.split(':')[1], 16) === port)
    .map(([, , , state]) => state);
}

async function listenOn(port: number): Promise<net.Server> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  return server;
}

const linux = process.platform === 'linux' ? test : test.skip;

linux('the port is kept out of port-0 binds: its listening side is left in TIME_WAIT', async () => {
  const port = await freePort();
  expect(socketStates(port)).toContain(TIME_WAIT);
  // What the kernel hands out to anyone asking for any port, while those asked before stay open.
  const others = await Promise.all(Array.from({ length: 200 }, () => listenOn(0)));
  try {
    expect(others.map((server) => (server.address() as net.AddressInfo).port)).not.toContain(port);
  } finally {
    await Promise.all(others.map((server) => new Promise((resolve) => server.close(resolve))));
  }
});

test('the port can be listened on by name at once, and the start command finds it free', async () => {
  const port = await freePort();
  expect(await portIsFree(port)).toBe(true);
  const server = await listenOn(port);
  try {
    expect(await portIsFree(port)).toBe(false);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
