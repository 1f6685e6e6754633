import net from 'node:net';

/** A TCP port that was free a moment ago on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
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
