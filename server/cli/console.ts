// `enrichbridge console-link`: a one-time sign-in link to the admin console, for one installation's
// CRM admin or for the operator (15 minutes, one sign-in).
import { Command } from 'commander';
import { consoleLinkUrl } from '../http/console/link.ts';
import { InstallationError } from '../../bridge/installations.ts';
import { loadSecretBox } from '../../core/secrets/secret-box.ts';
import { loadConfig } from '../config.ts';
import { withRuntime } from '../runtime/compose.ts';

export class ConsoleLinkRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConsoleLinkRefused';
  }
}

export function consoleCommand(): Command {
  return new Command('console-link')
    .description('print a one-time sign-in link to the admin console (good for 15 minutes and one sign-in)')
    .option('--installation <id>', 'the installation whose admin signs in (they see that installation only)')
    .option('--operator', 'sign in as the operator (every account, installation, job and snapshot)')
    .action(async (flags: { installation?: string; operator?: boolean }) => {
      if ((flags.installation === undefined) === (flags.operator !== true)) {
        throw new ConsoleLinkRefused('give exactly one of --installation ID and --operator');
      }
      const config = loadConfig();
      if (config.publicUrl === null) throw new ConsoleLinkRefused('set PUBLIC_URL, the address the console is reached at: links are made for it');
      const installationId = flags.installation;
      if (installationId !== undefined) {
        await withRuntime(async (bridge) => {
          if ((await bridge.pipelineStore.findInstallation(installationId)) === undefined) throw new InstallationError(`no installation ${installationId}`);
        });
      }
      const box = loadSecretBox({ dataDir: config.dataDir });
      const scope = installationId === undefined ? ({ kind: 'operator' } as const) : ({ kind: 'installation', installationId } as const);
      console.log(consoleLinkUrl(box, config.publicUrl, scope));
    });
}
