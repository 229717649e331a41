import type { HttpObserver } from '../adapters/http/dependencies.js';
import type { PrometheusMetrics } from './metrics.js';

/** How many label sets the observer keeps bound; routes, methods, statuses and codes are few. */
const BOUND_KEPT = 1_024;

/**
 * Label sets bound once (prom-client's `labels()`), so that counting an answer does not hash its labels again:
 * every request of the flood counts three times.
 */
const boundBy = <T>(bind: (key: string) => T) => {
  const bound = new Map<string, T>();
  return (key: string): T => {
    let found = bound.get(key);
    if (found === undefined) {
      found = bind(key);
      if (bound.size < BOUND_KEPT) bound.set(key, found);
    }
    return found;
  };
};

/**
 * The HTTP layer's requests and order answers, counted in Prometheus. A scrape renders the registry and reads
 * nothing: the gauges from Redis, MySQL and the broker are kept current by the service's `GaugeSampler`.
 */
export const prometheusObserver = (metrics: PrometheusMetrics): HttpObserver => {
  const requests = boundBy((key) => {
    const [method = '', code = '', route = ''] = key.split(' ');
    return metrics.httpRequests.labels({ method, route, code });
  });
  const durations = boundBy((key) => {
    const [method = '', route = ''] = key.split(' ');
    return metrics.httpDuration.labels({ method, route });
  });
  const answers = boundBy((code) => metrics.boundCounter('order_answers', { code }));
  return {
    request: (method, route, status, seconds) => {
      requests(`${method} ${status} ${route}`).inc();
      durations(`${method} ${route}`).observe(seconds);
    },
    orderAnswer: (code) => answers(code).inc(),
    render: async () => ({
      contentType: metrics.registry.contentType,
      body: await metrics.registry.metrics(),
    }),
  };
};
