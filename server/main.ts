// Process entry of the enrichment server (`npm start`): configuration, start, first-start banner,
// and graceful shutdown on SIGTERM or SIGINT.
import { type Config, ConfigError, backendsOf, loadConfig } from './config.ts';
import { type Logger, createServerLogger } from './logger.ts';
import { refusalOf } from './refusals.ts';
import { startServer } from './runtime.ts';

function banner(url: string, token: string): string {
  const body = JSON.stringify({ id: 'demo-1', first_name: 'Amanda', last_name: 'Taylor', emails: ['amanda.taylor@sandbox.windfall.com'] });
  return [
    '',
    'First start: created the "demo" account (Career Intelligence on, every field) and a sandbox token.',
    'The token is shown once; it is stored only as a hash.',
    '',
    `  sandbox token: ${token}`,
    '',
    'Enrich the sandbox persona Amanda Taylor:',
    '',
    `  curl -s -X POST ${url}/sandbox/v1 -H 'Content-Type: application/json' -H 'X-WF-Auth-Token: ${token}' -d '${body}'`,
    '',
  ].join('\n');
}

/** Logs are written asynchronously: let the last lines out before the process goes. */
function exitAfterFlush(logger: Logger, code: number): void {
  logger.flush(() => {
    process.exit(code);
  });
}

async function main(config: Config): Promise<void> {
  const logger = createServerLogger(config.logLevel);
  const server = await startServer(config, logger);
  // Which database and Redis this instance shares with the others (passwords masked), not just its folder.
  logger.info({ url: server.url, ...backendsOf(config), https_required: config.requireHttps }, 'listening');
  if (server.demoToken !== null) console.log(banner(server.url, server.demoToken));

  let signalled = false;
  const shutdown = (signal: NodeJS.Signals): void => {
    if (signalled) return;
    signalled = true;
    logger.info({ signal }, 'shutting down: finishing in-flight requests');
    server.stop().then(
      () => {
        logger.info('stopped');
        exitAfterFlush(logger, 0);
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        exitAfterFlush(logger, 1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}

let config: Config;
try {
  config = loadConfig();
} catch (error) {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
}
// A start the place it runs in refuses (the port taken, the database missing) ends with one line that
// names the fix; anything else is reported whole.
main(config).catch((error: unknown) => {
  console.error(refusalOf(error, config.databaseUrl) ?? error);
  process.exit(1);
});
