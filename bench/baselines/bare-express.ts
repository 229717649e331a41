/**
 * Baseline A of `npm run bench`: a bare express 5 app answering the order route with a constant JSON (202).
 * express.json() parses the body; nothing else (no auth, no validation, no Redis, no MySQL). Listens on
 * PORT (0: any free port) on 127.0.0.1 and prints `{"port":N}` once it does.
 */
import express from 'express';

const ANSWER = { orderId: '00000000-0000-4000-8000-000000000000', status: 'RESERVED' };

const app = express();
app.post('/api/v1/seckill/orders', express.json(), (_req, res) => {
  res.status(202).json(ANSWER);
});

const server = app.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1', (error?: Error) => {
  if (error) throw error;
  const address = server.address();
  if (typeof address === 'object' && address)
    process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
});
server.keepAliveTimeout = 65_000;

const stop = () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
