// Process entry of the enrichment server (`npm start`): configuration (PUBLIC_URL defaulted outside
// production mode), start, first-start banner, and graceful shutdown on SIGTERM or SIGINT.
import { loggableError } from '../core/observe/loggable-errors.ts';
import { loadSecretBox } from '../core/secrets/secret-box.ts';
import { type Config, ConfigError, backendsOf, loadConfig, withDefaultPublicUrl } from './config.ts';
import { consoleBase, operatorAccess } from './http/console/link.ts';
import { type Logger, createServerLogger } from './logger.ts';
import { refusalOf } from './refusals.ts';
import { startServer } from './runtime.ts';

/** The banner's lines on the admin console: the operator's way in (operatorAccess says which). */
function consoleLines(config: Config, publicUrlDefaulted: boolean): string[] {
  if (config.publicUrl === null) {
    return ['The admin console needs PUBLIC_URL, the address it is reached at; then: npx enrichbridge console-link --operator', ''];
  }
  const access = operatorAccess(loadSecretBox({ dataDir: config.dataDir }), { publicUrl: config.publicUrl, listenHost: config.host, publicUrlDefaulted });
  if (access.link === null) return ['Open the admin console as the operator with a one-time sign-in link from:', '', `  ${access.command}`, ''];
  return [
    'Open the admin console as the operator (this link works on this machine, once, within 15 minutes):',
    '',
    `  console: ${access.link}`,
    '',
    `A new link later: ${access.command}`,
    '',
  ];
}

function banner(url: string, token: string, consoleText: readonly string[]): string {
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
    ...consoleText,
  ].join('\n');
}

/** Logs are written asynchronously: let the last lines out before the process goes. */
function exitAfterFlush(logger: Logger, code: number): void {
  logger.flush(() => {
    process.exit(code);
  });
}

async function main(given: Config): Promise<void> {
  const config = withDefaultPublicUrl(given);
  const logger = createServerLogger(config.logLevel);
  const server = await startServer(config, logger);
  // Which database and Redis this instance shares with the others (passwords masked), not just its folder.
  logger.info(
    { url: server.url, ...backendsOf(config), https_required: config.requireHttps, console: config.publicUrl === null ? null : consoleBase(config.publicUrl) },
    'listening',
  );
  if (server.demoToken !== null) console.log(banner(server.url, server.demoToken, consoleLines(config, given.publicUrl !== config.publicUrl)));

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
// names the fix; anything else is reported as a log line would carry it (a database error by its code
// and names: its detail quotes a row's values).
main(config).catch((error: unknown) => {
  console.error(refusalOf(error, config.databaseUrl) ?? loggableError(error));
  process.exit(1);
});
