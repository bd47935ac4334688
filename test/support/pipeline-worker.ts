// A pipeline worker process for end-to-end tests: the real `enrichbridge worker` code path
// (runWorkerProcess: config, runtime, worker, SIGTERM handling) with one extra provider, `memcrm-http`,
// whose connector reaches a MemoryCrm served by the test process. Only the CRM is fake.
//
//   node --import tsx test/support/pipeline-worker.ts [--concurrency N] [--max-batch N]
// (pipeline-crash.e2e runs it bundled, built once for the file: the same code without tsx at each start)
//
// The CRM's base URL comes from the installation's sealed CRM credentials ({ baseUrl }), as a real
// connector's credentials would.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ConnectorRegistry } from '../../bridge/bridge.ts';
import { runWorkerProcess } from '../../server/cli/pipeline.ts';
import { HttpCrmConnector } from './memory-crm.ts';

/** Not exported: importing this module starts a worker. Tests spell the provider out. */
const HTTP_PROVIDER = 'memcrm-http';

const CredentialsSchema = z.object({ baseUrl: z.url() });
const Count = z.coerce.number().int().min(1).max(1000);

const { values } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '2' },
    'max-batch': { type: 'string', default: '100' },
  },
});
const concurrency = Count.parse(values.concurrency);
const maxBatch = Count.parse(values['max-batch']);

const registry = new ConnectorRegistry().register(HTTP_PROVIDER, async (installation, installations) => {
  const { baseUrl } = CredentialsSchema.parse((await installations.secrets(installation.id)).crm);
  return new HttpCrmConnector(baseUrl, maxBatch);
});

await runWorkerProcess(concurrency, registry);
