import type { SaleDashboard } from '../application/index.js';
import type { HttpObserver } from '../adapters/http/dependencies.js';
import type { AppLogger } from './logger.js';
import type { PrometheusMetrics } from './metrics.js';

/** The HTTP layer's requests and order answers, counted in Prometheus; a scrape renders the registry. */
export const prometheusObserver = (
  metrics: PrometheusMetrics,
  dashboard: SaleDashboard,
  logger: AppLogger,
): HttpObserver => ({
  request: (method, route, status, seconds) => {
    metrics.httpRequests.inc({ method, route, code: String(status) });
    metrics.httpDuration.observe({ method, route }, seconds);
  },
  orderAnswer: (code) => metrics.count('order_answers', { code }),
  render: async () => {
    // a scrape reads the gate, MySQL stock, the outbox and the consumer lag afresh into their gauges
    await dashboard.gather().catch((error: unknown) => {
      logger.warn({ err: String(error) }, 'metrics: could not read the sale figures');
    });
    return { contentType: metrics.registry.contentType, body: await metrics.registry.metrics() };
  },
});
