// The CRM modules' own commands (`enrichbridge hubspot …`, `enrichbridge salesforce …`), mounted as
// each module gives them (connectors/<crm>/cli.ts), with what they may open.
import type { Command } from 'commander';
import type { CrmCommandContext, CrmModule } from '../../bridge/crm-module.ts';
import { loadSecretBox } from '../../core/secrets/secret-box.ts';
import { loadConfig } from '../config.ts';
import { crmModules, withRuntime } from '../runtime/compose.ts';

/** What a CRM module's commands are given: the configuration read when a command runs, not before. */
export const commandContext: CrmCommandContext = {
  publicUrl: () => loadConfig().publicUrl,
  box: () => loadSecretBox({ dataDir: loadConfig().dataDir }),
  withRuntime,
  print: (line) => console.log(line),
  tell: (line) => console.error(line),
};

/** Every module's own commands (`enrichbridge hubspot …`, `enrichbridge salesforce …`). */
export function crmCommands(modules: readonly CrmModule[] = crmModules(loadConfig())): Command[] {
  return modules.flatMap((module) => (module.commands === undefined ? [] : [module.commands(commandContext)]));
}

/** One module's commands, by its provider name (tests run them in-process). */
export function crmCommand(provider: string, modules: readonly CrmModule[] = crmModules(loadConfig())): Command {
  const command = crmCommands(modules.filter((module) => module.provider === provider))[0];
  if (command === undefined) throw new Error(`no commands for provider "${provider}"`);
  return command;
}
