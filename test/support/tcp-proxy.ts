import net from 'node:net';

export interface TcpProxy {
  port: number;
  /** Cuts every open connection and drops new ones as they come, as a database that went down. */
  cut(): Promise<void>;
  /** Passes connections through again. */
  restore(): Promise<void>;
  /** How many connections were dropped while cut: each is one try of whoever needs the server. */
  droppedConnections(): number;
  close(): Promise<void>;
}

/** A loopback TCP proxy in front of a real server, to take that server "down" and back without stopping it. */
export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<net.Socket>();
  let down = false;
  let dropped = 0;
  const track = (socket: net.Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = net.createServer((client) => {
    if (down) {
      dropped += 1;
      client.on('error', () => {});
      client.destroy();
      return;
    }
    const upstream = net.connect(target.port, target.host);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  const cutOpenConnections = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    port,
    cut: async () => {
      down = true;
      cutOpenConnections();
    },
    restore: async () => {
      down = false;
    },
    droppedConnections: () => dropped,
    close: () =>
      new Promise<void>((resolve) => {
        cutOpenConnections();
        server.close(() => resolve());
      }),
  };
}
