// The composition root (openRuntime, as every CLI command opens it) in the test's own process, on the
// data folder a server or the CLI of the same test uses: set-up and read-backs without a CLI start each.
import { loadConfig } from '../../server/config.ts';
import { createLogger } from '../../server/logger.ts';
import { type Runtime, defaultConnectors, openRuntime } from '../../server/runtime.ts';

const KEY_ENV = 'ENRICHBRIDGE_SECRET_KEY';

/** Opens one at a time: each sets the process's key (openRuntime seals with process.env's) while it opens. */
let opening: Promise<unknown> = Promise.resolve();

/**
 * The runtime a CLI command would open with exactly `env` (its DATA_DIR, DATABASE_URL, CRM base URLs
 * and key): nothing the shell running the tests has set is read. The caller closes it.
 */
export function openFolderRuntime(env: Readonly<Record<string, string>>): Promise<Runtime> {
  const config = loadConfig(env);
  const opened = opening.then(async () => {
    const saved = process.env[KEY_ENV];
    const key = env[KEY_ENV];
    // Without a key in `env`, the folder's key file is used (and made), as the CLI would.
    if (key === undefined) Reflect.deleteProperty(process.env, KEY_ENV);
    else process.env[KEY_ENV] = key;
    try {
      return await openRuntime(config, createLogger('silent'), defaultConnectors(config), 'command');
    } finally {
      if (saved === undefined) Reflect.deleteProperty(process.env, KEY_ENV);
      else process.env[KEY_ENV] = saved;
    }
  });
  opening = opened.catch(() => undefined);
  return opened;
}

/** Runs `run` on a runtime opened as openFolderRuntime does, and closes it. */
export async function withFolderRuntime<T>(env: Readonly<Record<string, string>>, run: (runtime: Runtime) => Promise<T>): Promise<T> {
  const runtime = await openFolderRuntime(env);
  try {
    return await run(runtime);
  } finally {
    await runtime.close();
  }
}

/** A value as the CLI's --json prints it (dates as strings, undefined left out). */
export const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value));
