// What the console's view tests render: an installation as the store would give one, with the
// overrides a test cares about.
import { type Installation, InstallationSettingsSchema } from '../../bridge/model.ts';

export function anInstallation(overrides: Partial<Installation> = {}): Installation {
  return {
    id: 'inst_1',
    provider: 'hubspot',
    externalAccountId: '62515',
    environment: 'sandbox',
    target: { kind: 'remote', url: 'https://api.example.com/sandbox/v1' },
    status: 'active',
    pausedUntil: null,
    pauseReason: null,
    settings: InstallationSettingsSchema.parse({}),
    createdAt: '2026-11-27T00:00:00.000Z',
    updatedAt: '2026-11-27T00:00:00.000Z',
    ...overrides,
  };
}
