import net from 'node:net';
import { once } from 'node:events';

/**
 * A TCP port that was free a moment ago on loopback, and that the kernel will not hand to anyone else who asks for
 * any free port (bind to port 0) for the next minute.
 *
 * Linux picks such ports at random, so a port merely closed again may be picked at once by the next process that asks:
 * a Temporal dev server choosing its internal ports took the UI port a test had just been given. As Temporal's own
 * CLI and Go SDK do (their freeport.go), one connection to the port is made and closed from the listening side first,
 * which leaves that side in TIME_WAIT: the kernel skips the port for port-0 binds while it lasts, yet it can be
 * listened on by name (every server we start sets SO_REUSEADDR: Node, Go, Postgres). macOS and Windows hand out ports
 * in sequence and need none of it.
 */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.unref();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  if (process.platform !== 'darwin' && process.platform !== 'win32') {
    const client = net.connect(port, '127.0.0.1');
    client.on('error', () => undefined);
    // Awaiting the client's connect too: one that fails rejects instead of waiting for a connection that never comes.
    const [[socket]] = await Promise.all([once(server, 'connection') as Promise<[net.Socket]>, once(client, 'connect')]);
    const clientEnded = once(client, 'end');
    socket.destroy();
    await clientEnded;
    client.destroy();
  }
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Whether nothing listens on the port of 127.0.0.1, found by listening on it for a moment. Any error but the port
 * being in use (no permission, no such address) is thrown: it says nothing about the port being free.
 */
export function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' ? resolve(false) : reject(err)));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}
