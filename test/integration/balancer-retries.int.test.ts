import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { haproxyConfig } from '../../scripts/cluster/deployment.js';
import { exited, waitFor } from '../../scripts/cluster/processes.js';

/**
 * The deployment's balancer, HAProxy as `npm run cluster` configures it, in front of two APIs stood in for by
 * plain HTTP servers: one healthy, one dying (its health check still passes, but it cuts every request or
 * answers it 503). What the buyer sees, and what reaches the healthy API, tells which requests the balancer
 * sends again.
 */
type Seen = { method: string; url: string; key: string | undefined };

const listen = async (handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> => {
  const server = createServer((req, res) => {
    // the balancer's checks pass on both: the dying API has not noticed yet
    if (req.url === '/readyz') return void res.writeHead(200).end('ok');
    req.resume();
    req.once('end', () => handle(req, res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
};

const portOf = (server: Server): number => (server.address() as { port: number }).port;

describe('the balancer sends a request again to another API only when it is safe to', () => {
  const healthySaw: Seen[] = [];
  let dyingWay: 'cut' | '503' = 'cut';
  let healthy: Server;
  let dying: Server;
  let haproxy: ChildProcess;
  let url: string;
  let dir: string;

  beforeAll(async () => {
    healthy = await listen((req, res) => {
      healthySaw.push({ method: req.method!, url: req.url!, key: req.headers['idempotency-key'] as string });
      res.writeHead(req.method === 'POST' ? 202 : 200, { 'content-type': 'application/json' }).end('{}');
    });
    dying = await listen((req, res) => {
      if (dyingWay === 'cut') req.socket.destroy();
      else res.writeHead(503, { 'content-type': 'application/problem+json' }).end('{}');
    });
    const balancer = await listen(() => undefined);
    const balancerPort = portOf(balancer);
    await new Promise((resolve) => balancer.close(resolve));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'seckill-balancer-'));
    const config = path.join(dir, 'haproxy.cfg');
    fs.writeFileSync(config, haproxyConfig(balancerPort, [portOf(dying), portOf(healthy)]));
    haproxy = spawn('haproxy', ['-db', '-f', config], { stdio: 'ignore' });
    url = `http://127.0.0.1:${balancerPort}`;
    await waitFor('HAProxy answering', async () => (await fetch(`${url}/readyz`)).ok, 30_000);
  }, 60_000);

  afterAll(async () => {
    const done = exited(haproxy);
    haproxy.kill('SIGTERM');
    await done;
    await Promise.all([healthy, dying].map((s) => new Promise((resolve) => s.close(resolve))));
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** ten requests in a row: round robin sends every other one to the dying API first */
  const tenOf = async (
    method: 'GET' | 'POST',
    keyed: boolean,
    route = '/api/v1/seckill/orders',
  ): Promise<Array<number | 'cut'>> => {
    const statuses: Array<number | 'cut'> = [];
    for (let i = 0; i < 10; i += 1) {
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (keyed) headers['idempotency-key'] = `key-${method}-${dyingWay}-${i}`;
      const answer = await fetch(`${url}${route}?i=${i}`, {
        method,
        headers,
        ...(method === 'POST' ? { body: JSON.stringify({ productId: 1, quantity: 1 }) } : {}),
      }).catch(() => null);
      statuses.push(answer ? answer.status : 'cut');
    }
    return statuses;
  };

  it.each(['cut', '503'] as const)(
    'answers every read and every keyed order when the dying API %s them, each reaching the healthy API once',
    async (way) => {
      dyingWay = way;
      healthySaw.length = 0;
      expect(await tenOf('GET', false)).toEqual(Array(10).fill(200));
      expect(await tenOf('POST', true)).toEqual(Array(10).fill(202));
      const keys = healthySaw.filter((s) => s.method === 'POST').map((s) => s.key);
      expect(keys).toHaveLength(10);
      expect(new Set(keys).size).toBe(10);
    },
  );

  it('never sends an order without a key twice: the buyer sees the failure and asks again', async () => {
    dyingWay = 'cut';
    healthySaw.length = 0;
    const statuses = await tenOf('POST', false);
    const failed = statuses.filter((s) => s !== 202);
    expect(failed.length).toBeGreaterThanOrEqual(4);
    expect(failed.every((s) => s === 502 || s === 'cut')).toBe(true);
    // the healthy API got only the orders sent to it first, never one the dying API had been sent
    expect(healthySaw.filter((s) => s.method === 'POST')).toHaveLength(10 - failed.length);
  });

  it('never sends a keyed POST to another route twice: only orders answer a repeat from their key', async () => {
    dyingWay = 'cut';
    healthySaw.length = 0;
    const statuses = await tenOf('POST', true, '/api/v1/admin/products/1/stock');
    const failed = statuses.filter((s) => s !== 202);
    expect(failed.length).toBeGreaterThanOrEqual(4);
    expect(healthySaw.filter((s) => s.method === 'POST')).toHaveLength(10 - failed.length);
  });
});
