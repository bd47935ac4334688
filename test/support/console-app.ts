// The admin console's router on a real HTTP server of its own, over parts a test already has (a
// runtime, or a pipeline harness), and signed-in sessions for it: the cookie and the form token a
// browser would hold. The console int tests share this set-up; each says only what its console holds.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { type ConsoleContext } from '../../server/http/console/kit.ts';
import { consoleRouter } from '../../server/http/console/routes.ts';
import { csrfToken, sessionCookie } from '../../server/http/console/session.ts';
import type { ConsoleScope } from '../../bridge/console-sessions.ts';
import { createLogger } from '../../server/logger.ts';
import type { Runtime } from '../../server/runtime.ts';

export interface ConsoleApp {
  readonly url: string;
  /** A signed-in session's cookie (`name=value`) and form token; `person` as the CRM's sign-in names them. */
  signIn(scope: ConsoleScope, person?: string): Promise<{ cookie: string; csrf: string }>;
  close(): Promise<void>;
}

/** The parts of a ConsoleContext the tests vary; the rest (a silent log) is filled in. */
export type ConsoleParts = Omit<ConsoleContext, 'log'> & { readonly log?: ConsoleContext['log'] };

export async function startConsoleApp(parts: ConsoleParts): Promise<ConsoleApp> {
  const publicUrl = parts.publicUrl;
  if (publicUrl === null) throw new Error('the console needs a public URL');
  const app = express();
  app.use(consoleRouter({ ...parts, log: parts.log ?? createLogger('silent') }));
  const server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async signIn(scope, person) {
      const session = await parts.bridge.consoleSessions.create(scope);
      return { cookie: sessionCookie(parts.box, publicUrl, session.id, person).split(';')[0] ?? '', csrf: csrfToken(session.id) };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The console over a runtime's own parts (its box, bridge, store, service, queue and modules). */
export function runtimeConsole(runtime: Runtime, publicUrl: string, extra: Partial<ConsoleParts> = {}): Promise<ConsoleApp> {
  return startConsoleApp({
    publicUrl,
    box: runtime.box,
    bridge: runtime.bridge,
    store: runtime.opened.store,
    service: runtime.service,
    queue: runtime.opened.queue,
    modules: runtime.modules,
    ...extra,
  });
}
