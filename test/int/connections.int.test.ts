// Connections are bounded (issue 10, item 7): a client that trickles or never finishes its headers
// is cut off by the server after HTTP_HEADERS_TIMEOUT_MS, and beyond MAX_CONNECTIONS new connections
// are closed at once, so a flood of idle sockets cannot take every descriptor; /healthz answers again
// as soon as they are gone. Real startServer, real sockets.
import { rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { type RunningServer, startServer } from '../../server/runtime.ts';
import { tempDir } from '../support/harness.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(env: Record<string, string>): Promise<RunningServer> {
  const dataDir = tempDir('enrichbridge-connections-');
  const server = await startServer(loadConfig({ DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'silent', WORKER_CONCURRENCY: '0', ...env }), createLogger('silent'));
  cleanups.push(async () => {
    await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  return server;
}

interface Peer {
  readonly socket: net.Socket;
  /** Settles when the socket is closed, saying whether the server ended it (a FIN we did not ask for) and what it sent. */
  readonly closed: Promise<{ endedByServer: boolean; received: string }>;
}

/** A raw TCP connection that sends `bytes` (maybe half a request) and then waits. */
async function connect(server: RunningServer, bytes: string): Promise<Peer> {
  const socket = net.connect(server.port, '127.0.0.1');
  let endedByServer = false;
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  socket.on('end', () => {
    endedByServer = true;
  });
  const closed = new Promise<{ endedByServer: boolean; received: string }>((resolve) => {
    socket.on('close', () => resolve({ endedByServer, received }));
  });
  socket.on('error', () => {
    // A reset from the server is also the server closing it: 'close' follows.
    endedByServer = true;
  });
  await new Promise<void>((resolve) => socket.once('connect', resolve));
  if (bytes !== '') socket.write(bytes);
  cleanups.push(() => void socket.destroy());
  return { socket, closed };
}

/** GET /healthz on a connection of its own (no keep-alive pool holding a connection slot). */
function healthz(server: RunningServer): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(`${server.url}/healthz`, { agent: false }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      })
      .on('error', reject);
  });
}

/** /healthz once the server has seen the client's closes; the server learns of them asynchronously. */
async function healthzOnceFree(server: RunningServer, attempts = 50): Promise<number> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await healthz(server);
    } catch (error) {
      if (attempt >= attempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

const HALF_A_HEADER = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ';

describe('connection limits', () => {
  it('cuts off a client that sends half its request headers once HTTP_HEADERS_TIMEOUT_MS has passed', async () => {
    const server = await start({ HTTP_HEADERS_TIMEOUT_MS: '300', HTTP_REQUEST_TIMEOUT_MS: '300' });
    const slow = await connect(server, HALF_A_HEADER);

    const { endedByServer } = await slow.closed;

    expect(endedByServer).toBe(true);
    expect(await healthz(server)).toBe(200);
  });

  it('cuts off a client that connects and sends nothing once HTTP_HEADERS_TIMEOUT_MS has passed', async () => {
    const server = await start({ HTTP_HEADERS_TIMEOUT_MS: '300', HTTP_REQUEST_TIMEOUT_MS: '300' });
    const silent = await connect(server, '');

    const { endedByServer } = await silent.closed;

    expect(endedByServer).toBe(true);
  });

  it('cuts off a client whose body has not all arrived once HTTP_REQUEST_TIMEOUT_MS has passed', async () => {
    const server = await start({ HTTP_HEADERS_TIMEOUT_MS: '300', HTTP_REQUEST_TIMEOUT_MS: '600' });
    // Complete headers, then 2 of the 100 bytes promised.
    const slow = await connect(server, 'POST /sandbox/v1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"');

    const { endedByServer } = await slow.closed;

    expect(endedByServer).toBe(true);
  });

  it('closes connections beyond MAX_CONNECTIONS at once, and /healthz answers as soon as the others go', async () => {
    const server = await start({ MAX_CONNECTIONS: '3' });
    const held = [await connect(server, HALF_A_HEADER), await connect(server, HALF_A_HEADER), await connect(server, HALF_A_HEADER)];
    // Sent the whole request: an open connection would be answered, one over the limit is closed unread.
    const extra = await connect(server, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');

    const refused = await extra.closed;

    expect(refused).toEqual({ endedByServer: true, received: '' });
    for (const peer of held) expect(peer.socket.destroyed).toBe(false);
    for (const peer of held) peer.socket.destroy();
    await Promise.all(held.map((peer) => peer.closed));
    expect(await healthzOnceFree(server)).toBe(200);
  });
});
