// How server/http mounts a CRM module's routes: whatever a handler's answer does when it is sent, the
// caller gets an answer and the process goes on (an answer express cannot send was once an unhandled
// rejection, which ends a Node process).
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NoSnapshotMatcher } from '../../core/enrich/production-matcher.ts';
import { EnrichService } from '../../core/enrich/service.ts';
import { MemoryRateLimiter } from '../../core/limits/rate-limiter.ts';
import { SecretBox } from '../../core/secrets/secret-box.ts';
import type { CrmModule } from '../../bridge/crm-module.ts';
import { createBridge, ConnectorRegistry } from '../../bridge/bridge.ts';
import { openStorage } from '../../bridge/storage.ts';
import { createApp } from '../../server/http/app.ts';
import { crmRouter } from '../../server/http/crm-routes.ts';
import { createLogger } from '../../server/logger.ts';
import { tempDir } from '../support/harness.ts';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('CRM routes as mounted', () => {
  it('an answer express refuses to send (an impossible status) becomes a 500, and the process goes on', async () => {
    const opened = await openStorage(path.join(tempDir(), 'eb.db'));
    cleanups.push(() => opened.store.close());
    const service = new EnrichService({ store: opened.store, rateLimiter: new MemoryRateLimiter(), productionMatcher: new NoSnapshotMatcher() });
    const box = new SecretBox(Buffer.alloc(32, 7));
    const bridge = createBridge({ db: opened.db, store: opened.store, queue: opened.queue, box, service, connectors: new ConnectorRegistry() });
    const module: CrmModule = {
      provider: 'broken',
      name: 'Broken',
      objects: ['contact'],
      connector: () => Promise.reject(new Error('unused')),
      routes: () => [{ method: 'GET', path: '/broken', handle: () => ({ status: 1000, headers: {}, body: 'never' }) }],
    };
    const logger = createLogger('silent');
    const app = createApp({
      service,
      logger,
      trustProxy: false,
      requireHttps: false,
      routers: [crmRouter([module], { publicUrl: null, bridge, queue: opened.queue, box, log: logger, wake: () => undefined })],
    });
    const server = createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const { port } = server.address() as AddressInfo; // a TCP listener always reports an AddressInfo
    const answer = await fetch(`http://127.0.0.1:${port}/broken`, { signal: AbortSignal.timeout(5_000) });
    expect(answer.status).toBe(500);
    expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  });
});
