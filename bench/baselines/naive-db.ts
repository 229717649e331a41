/**
 * Baseline B of `npm run bench`: the naive flash sale. express 5 and one MariaDB pool (mysql2, the driver
 * under MikroORM); per request one conditional decrement on the product row, `202` when it took a unit,
 * `409 SOLD_OUT` when it did not. No gate, no queue, no events, no auth.
 *
 * NAIVE_MYSQL_URL names its database (its own `product` table, made by the benchmark); PORT (0: any free
 * port) on 127.0.0.1; prints `{"port":N}` once it listens.
 */
import express from 'express';
import { createPool, type ResultSetHeader } from 'mysql2/promise';

const url = process.env['NAIVE_MYSQL_URL'];
if (!url) throw new Error('NAIVE_MYSQL_URL is required');
const pool = createPool({ uri: url, connectionLimit: Number(process.env['NAIVE_POOL_SIZE'] ?? 20) });

const DECREMENT = 'UPDATE product SET stock = stock - 1, version = version + 1 WHERE id = ? AND stock >= 1';

const app = express();
app.post('/api/v1/seckill/orders', express.json(), async (req, res) => {
  const productId = Number((req.body as { productId?: unknown } | undefined)?.productId);
  try {
    const [result] = await pool.execute<ResultSetHeader>(DECREMENT, [productId]);
    if (result.affectedRows === 1) res.status(202).json({ productId, status: 'ACCEPTED' });
    else res.status(409).json({ code: 'SOLD_OUT' });
  } catch (error) {
    res.status(503).json({ code: 'UNAVAILABLE', detail: String(error) });
  }
});

const server = app.listen(Number(process.env['PORT'] ?? 0), '127.0.0.1', (error?: Error) => {
  if (error) throw error;
  const address = server.address();
  if (typeof address === 'object' && address)
    process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
});
server.keepAliveTimeout = 65_000;

const stop = () => {
  server.close(() => void pool.end().finally(() => process.exit(0)));
  server.closeAllConnections();
};
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
