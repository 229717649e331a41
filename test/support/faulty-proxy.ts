import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * An HTTP proxy in front of the service that troubles order requests the way a flaky network and a strained
 * balancer do: of every ten first tries (by Idempotency-Key), one is answered 503 without reaching the service,
 * and one reaches the service but its answer is dropped (the connection is cut once the service has answered).
 * Retries, every other request and every other route pass through untouched.
 */
export class FaultyOrderProxy {
  private server: Server | null = null;
  private orders = 0;
  private readonly keys = new Set<string>();
  /** order requests answered 503 here, and answers dropped here */
  readonly troubled = { refused: 0, dropped: 0 };

  constructor(private readonly target: string) {}

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  async start(): Promise<this> {
    const target = new URL(this.target);
    this.server = createServer((req, res) => {
      const key = req.headers['idempotency-key'];
      const firstTry =
        req.method === 'POST' &&
        req.url === '/api/v1/seckill/orders' &&
        typeof key === 'string' &&
        !this.keys.has(key);
      if (firstTry) this.keys.add(key);
      const n = firstTry ? this.orders++ % 10 : -1;
      if (n === 3) {
        this.troubled.refused++;
        req.resume();
        res.writeHead(503, { 'content-type': 'application/problem+json', 'retry-after': '1' });
        res.end(JSON.stringify({ status: 503, code: 'UNAVAILABLE', title: 'Service Unavailable' }));
        return;
      }
      const upstream = request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (answer: IncomingMessage) => {
          if (n === 7) {
            this.troubled.dropped++;
            answer.resume();
            res.socket?.destroy();
            return;
          }
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => res.socket?.destroy());
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
