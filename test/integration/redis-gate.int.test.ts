import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { InfrastructureUnavailable } from '../../src/application/index.js';
import { connectRedis, type RedisClient } from '../../src/adapters/redis/redis-connection.js';
import { RedisStockGate } from '../../src/adapters/redis/redis-stock-gate.js';
import { dropNamespace, freshNamespace } from '../support/redis-contracts.js';

const url = process.env['SECKILL_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const reservation = (orderId: string, userId = `u-${orderId}`) => ({
  productId: 42,
  orderId,
  userId,
  quantity: 1,
  perUserLimit: 1,
});

describe('RedisStockGate on a real Redis', () => {
  let client: RedisClient;
  const namespace = freshNamespace();

  beforeAll(() => {
    client = connectRedis({ url, commandTimeoutMs: 5_000 });
  });
  afterAll(async () => {
    await dropNamespace(client, namespace);
    await client.quit();
  });

  it('reads a stock written as text by hand (tonumber), and treats a missing key as NOT_LOADED', async () => {
    const gate = new RedisStockGate(client, `${namespace}text:`);
    await client.set(`${namespace}text:seckill:{p42}:stock`, '2');
    expect(await gate.reserve(reservation('a'))).toEqual({ ok: true, stockLeft: 1 });
    await client.del(`${namespace}text:seckill:{p42}:stock`);
    expect(await gate.reserve(reservation('b'))).toEqual({ ok: false, reason: 'NOT_LOADED' });
    expect(await gate.stockLeft(42)).toBeNull();
  });
});

describe('RedisStockGate when Redis fails', () => {
  let server: ChildProcess | null = null;
  let client: RedisClient | null = null;

  afterEach(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGCONT');
      const exited = new Promise((resolve) => server?.once('exit', resolve));
      server.kill('SIGTERM');
      await exited;
    }
    client?.disconnect();
    server = null;
    client = null;
  });

  it('answers a down Redis with the unavailable error instead of hanging', async () => {
    client = connectRedis({ url: 'redis://127.0.0.1:1', commandTimeoutMs: 300 });
    const gate = new RedisStockGate(client);
    await expect(gate.reserve(reservation('o1'))).rejects.toBeInstanceOf(InfrastructureUnavailable);
  });

  it('answers a frozen Redis with the unavailable error, and works again once it thaws', async () => {
    const port = 26_000 + Math.floor(Math.random() * 2_000);
    server = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    client = connectRedis({ url: `redis://127.0.0.1:${port}`, commandTimeoutMs: 300 });
    const gate = new RedisStockGate(client);
    for (;;) {
      const warmed = await gate.warm(42, 3).catch(() => null);
      if (warmed) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    server.kill('SIGSTOP');
    await expect(gate.reserve(reservation('o1'))).rejects.toBeInstanceOf(InfrastructureUnavailable);

    server.kill('SIGCONT');
    // the timed-out call may have run once Redis woke up; it is recorded by orderId, so a retry takes no more
    const retried = await gate.reserve(reservation('o1'));
    expect(retried.ok).toBe(true);
    expect(await gate.stockLeft(42)).toBe(2);
  });
});
