import type { HttpObserver } from '../adapters/http/dependencies.js';
import type { PrometheusMetrics } from './metrics.js';

/**
 * The HTTP layer's requests and order answers, counted in Prometheus. A scrape renders the registry and reads
 * nothing: the gauges from Redis, MySQL and the broker are kept current by the service's `GaugeSampler`.
 */
export const prometheusObserver = (metrics: PrometheusMetrics): HttpObserver => ({
  request: (method, route, status, seconds) => {
    metrics.httpRequests.inc({ method, route, code: String(status) });
    metrics.httpDuration.observe({ method, route }, seconds);
  },
  orderAnswer: (code) => metrics.count('order_answers', { code }),
  render: async () => ({ contentType: metrics.registry.contentType, body: await metrics.registry.metrics() }),
});
