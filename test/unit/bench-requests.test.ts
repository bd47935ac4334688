// The benchmarks' load: what autocannon's connections send when a target has several bodies.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import autocannon from 'autocannon';
import { afterEach, describe, expect, it } from 'vitest';
import { rotatingRequests } from '../bench/bench-support.ts';

let server: http.Server | null = null;

afterEach(async () => {
  server?.close();
  server = null;
});

/** A server that keeps every body it is sent, in the order they arrive. */
async function recordingServer(): Promise<{ url: string; received: string[] }> {
  const received: string[] = [];
  server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      received.push(body);
      response.end('{}');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, received };
}

describe('rotatingRequests', () => {
  it('the connections in flight send different records, each body in turn', async () => {
    const { url, received } = await recordingServer();
    const bodies = Array.from({ length: 50 }, (_, i) => `{"id":"q-${i}"}`);
    await autocannon({ url, method: 'POST', connections: 10, pipelining: 1, amount: 40, requests: rotatingRequests(bodies) });
    expect(received).toHaveLength(40);
    // The first ten are the ten connections' first requests: as a plain list, all ten were the first body.
    expect(new Set(received.slice(0, 10)).size).toBe(10);
    expect(new Set(received).size).toBe(40);
    expect([...received].sort()).toEqual(bodies.slice(0, 40).sort());
  });

  it('starts again at the first body once every body has been sent', async () => {
    const { url, received } = await recordingServer();
    const bodies = ['{"id":"a"}', '{"id":"b"}', '{"id":"c"}'];
    await autocannon({ url, method: 'POST', connections: 1, pipelining: 1, amount: 7, requests: rotatingRequests(bodies) });
    expect(received).toEqual(['{"id":"a"}', '{"id":"b"}', '{"id":"c"}', '{"id":"a"}', '{"id":"b"}', '{"id":"c"}', '{"id":"a"}']);
  });
});
