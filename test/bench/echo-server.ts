// The bench's baseline: bare Express 5 with the same validation as the enrichment endpoints (POST /echo
// parses the JSON body, checks it against the contract's request schema, and answers what it parsed, or
// 400), started as a child process by api.bench.ts so the sandbox is measured against Express's own
// floor for the same work on this machine.
import express from 'express';
import { EnrichmentRequestSchema } from '../../core/contract/schemas.ts';

const port = Number(process.env['PORT'] ?? '0');
const app = express();

app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
app.post('/echo', express.json(), (req, res) => {
  const parsed = EnrichmentRequestSchema.safeParse(req.body);
  if (parsed.success) res.json(parsed.data);
  else res.status(400).json({ error: 'invalid_request' });
});

const server = app.listen(port, '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
