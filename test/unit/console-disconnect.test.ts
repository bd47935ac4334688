// The console's disconnect page says what a disconnect does, and nothing it does not: the installation's
// jobs go with it, and its log stays where the operator can read it (enrichbridge log --installation ID).
import { describe, expect, it } from 'vitest';
import { anInstallation } from '../support/console-fixtures.ts';
import { disconnectPage, keptLogSentence } from '../../server/http/console/settings.tsx';

const installation = anInstallation({ id: 'inst_0123456789abcdef0123456789abcdef' });

describe('the disconnect page', () => {
  const html = disconnectPage({ base: '/console', session: { who: 'operator', csrf: 'c' } }, installation);

  it('names the command the operator reads the kept log with, for this installation', () => {
    expect(keptLogSentence(installation.id)).toContain(`enrichbridge log --installation ${installation.id}`);
    expect(html).toContain(keptLogSentence(installation.id));
  });

  it('says the jobs go with the installation, none retried', () => {
    expect(html).toContain('its jobs (waiting, running or failed: none is retried)');
  });
});
