// A CRM or enrichment endpoint that hangs, on loopback: it accepts the connection and reads the
// request, then never answers (`silent`), or answers its headers and the start of a body that never
// ends (`stalled-body`). What a stuck upstream looks like to our outbound calls.
import { type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HangingServer {
  readonly url: string;
  /** Requests received so far. */
  readonly requests: () => number;
  /** Requests whose connection is still open (the caller has not given up). */
  readonly pending: () => number;
  close(): Promise<void>;
}

export async function startHangingServer(mode: 'silent' | 'stalled-body' = 'silent'): Promise<HangingServer> {
  let requests = 0;
  const open = new Set<ServerResponse>();
  const server: Server = createServer((req, res) => {
    requests += 1;
    open.add(res);
    res.on('close', () => open.delete(res));
    req.resume();
    if (mode === 'stalled-body') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"results":[');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo; // a TCP listener always reports an AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => requests,
    pending: () => open.size,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
