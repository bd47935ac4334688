// The bench's baseline: a bare Express 5 JSON echo (POST /echo answers the parsed body), started as a
// child process by api.bench.ts so the sandbox is measured against Express's own floor on this machine.
import express from 'express';

const port = Number(process.env['PORT'] ?? '0');
const app = express();

app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
app.post('/echo', express.json(), (req, res) => {
  res.json(req.body);
});

const server = app.listen(port, '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
