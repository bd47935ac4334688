// The CRM modules' commands as the command line mounts them (server/cli/crm.ts, server/cli/backfill.ts):
// every module's own group and its backfill, with nothing about a CRM written in server/cli.
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/harness.ts';
import { cli } from '../support/processes.ts';

describe('the CRM modules on the command line', () => {
  it("mounts every module's own commands and its backfill", async () => {
    const env = { DATA_DIR: tempDir() };
    const help = (await cli(['--help'], env)).stdout;
    expect(help).toMatch(/^\s+hubspot\s/m);
    expect(help).toMatch(/^\s+salesforce\s/m);
    const backfill = (await cli(['backfill', '--help'], env)).stdout;
    expect(backfill).toMatch(/^\s+hubspot \[options\] <installation>/m);
    expect(backfill).toMatch(/^\s+salesforce \[options\] <installation>/m);
    // A module with more than one object asks for one; its own flags are there.
    const salesforce = (await cli(['backfill', 'salesforce', '--help'], env)).stdout;
    expect(salesforce).toContain('--object <object>');
    expect(salesforce).toContain('--where-not-enriched');
    expect((await cli(['backfill', 'hubspot', '--help'], env)).stdout).not.toContain('--object');
  });

  it('shows help with a configuration that does not load, and refuses to run a command with its error', async () => {
    // Half the JWT settings: loadConfig refuses them.
    const env = { DATA_DIR: tempDir(), SALESFORCE_JWT_USERNAME: 'integration@example.com' };
    expect((await cli(['--help'], env)).stdout).toContain('salesforce');
    await expect(cli(['accounts', 'list'], env)).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('go together') });
    await expect(cli(['hubspot', 'disconnect', 'inst_x'], env)).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('go together') });
  });

  it('refuses a backfill of an installation that does not exist, naming it', async () => {
    const env = { DATA_DIR: tempDir() };
    await expect(cli(['backfill', 'hubspot', 'inst_missing', '--dry-run'], env)).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining('inst_missing'),
    });
  });
});
