import express from 'express';
import type { HealthCheck } from '../../application/index.js';

export type OpsDependencies = Readonly<{
  health: readonly HealthCheck[];
  observer: Readonly<{ render(): Promise<{ contentType: string; body: string }> }>;
}>;

const withTimeout = async <T>(work: Promise<T>, ms: number): Promise<T> => {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
};

/** Liveness, readiness and Prometheus metrics: on the API, and alone on a worker's metrics port. */
export const mountOps = (app: express.Express, deps: OpsDependencies): void => {
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  app.get('/readyz', async (_req, res) => {
    const checks: Record<string, string> = {};
    let ready = true;
    for (const check of deps.health) {
      try {
        await withTimeout(check.check(), 2_000);
        checks[check.name] = 'ok';
      } catch (error) {
        ready = false;
        checks[check.name] = String(error instanceof Error ? error.message : error);
      }
    }
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks });
  });

  app.get('/metrics', async (_req, res) => {
    const { contentType, body } = await deps.observer.render();
    res.type(contentType).send(body);
  });
};

/** What a worker without the API serves, so that its counters (commits, releases, relay, reconciliation) are scraped. */
export const createOpsApp = (deps: OpsDependencies): express.Express => {
  const app = express();
  app.disable('x-powered-by');
  mountOps(app, deps);
  return app;
};
