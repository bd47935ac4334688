// The start-up check of the secret key: a server or worker whose key opens none of the stored CRM
// credentials says so once, at start, in one line naming ENRICHBRIDGE_SECRET_KEY and the fix.
import { type SecretBox, SECRET_KEY_ENV, KEY_FILE_NAME } from '../core/secrets/secret-box.ts';
import { secretsOpenedBy } from '../bridge/installations.ts';
import type { PipelineStore } from '../bridge/store.ts';
import path from 'node:path';
import type { Logger } from './logger.ts';

/** Installations tried at start: enough to tell the wrong key from a damaged row, cheap with thousands. */
const CHECKED_AT_START = 50;

/**
 * Tries the key on the first installations' sealed secrets. None opens: an error line (every
 * installation's webhooks answer 503 and its jobs fail until the key is fixed). Some do not: a warning.
 */
export async function checkSecretKey(
  box: SecretBox,
  pipeline: PipelineStore,
  dataDir: string,
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
): Promise<void> {
  const { tried, opened } = await secretsOpenedBy(box, pipeline, CHECKED_AT_START);
  if (opened === tried) return;
  const keyFile = path.join(dataDir, KEY_FILE_NAME);
  const source = env[SECRET_KEY_ENV] === undefined ? `${keyFile}, as ${SECRET_KEY_ENV} is unset` : SECRET_KEY_ENV;
  const fix =
    `set ${SECRET_KEY_ENV} to the key that sealed them (for a data folder moved with data migrate-to-postgres, ` +
    "that folder's secret.key) on every instance, and restart";
  if (opened === 0) {
    logger.error(
      { installations_checked: tried, key_source: source },
      `the secret key (${source}) opens none of the ${tried} stored CRM credentials checked, so every installation's webhooks and enrichments fail: ${fix}`,
    );
  } else {
    logger.warn(
      { installations_checked: tried, opened, key_source: source },
      `the secret key (${source}) opens ${opened} of the ${tried} stored CRM credentials checked; the others' webhooks and enrichments fail: ${fix}`,
    );
  }
}
