// A TCP relay on a loopback port between clients and a server (Redis, PostgreSQL): `cut()` drops every
// connection through it and refuses new ones until `restore()`, as a network partition, a failover or
// a restart of the server would look from the client's side; `silence()` leaves them open and silent.
import net, { type AddressInfo } from 'node:net';

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'redis:': 6379, 'rediss:': 6379, 'postgres:': 5432, 'postgresql:': 5432 };

export class TcpOutage {
  private readonly sockets = new Set<net.Socket>();
  private readonly server = net.createServer((client) => this.relay(client));
  private down = false;
  /** The target's URL with the relay's host and port: where a client connects to go through it. */
  url = '';
  /** Connections made through the relay so far (refused ones not counted). */
  connections = 0;

  private constructor(private readonly target: URL) {}

  static async start(target: string): Promise<TcpOutage> {
    const outage = new TcpOutage(new URL(target));
    await new Promise<void>((resolve) => outage.server.listen(0, '127.0.0.1', resolve));
    const { port } = outage.server.address() as AddressInfo; // a TCP listener always reports an AddressInfo
    const url = new URL(target);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    outage.url = url.toString();
    return outage;
  }

  private relay(client: net.Socket): void {
    if (this.down) {
      client.destroy();
      return;
    }
    this.connections += 1;
    const upstream = net.connect(Number(this.target.port || DEFAULT_PORTS[this.target.protocol] || 0), this.target.hostname);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
  }

  /** Whether the relay is cut. */
  get isDown(): boolean {
    return this.down;
  }

  /**
   * Stops every byte through the relay's open connections without closing them, as a peer that vanished
   * without a word (a dead host, a dropped route) looks from the client's side; new connections pass.
   */
  silence(): void {
    for (const socket of this.sockets) {
      socket.unpipe();
      socket.pause();
    }
  }

  cut(): void {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
  }

  restore(): void {
    this.down = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
