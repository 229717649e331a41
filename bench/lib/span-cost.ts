import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startOtelTracing } from '../../src/adapters/otel/otel-tracer.js';
import { NO_TRACING, Spans, type Tracer } from '../../src/application/index.js';

/** An HTTP server that takes whatever is sent and answers 202: a span intake that keeps nothing. */
export const nullSink = async (): Promise<{ url: string; close: () => Promise<void> }> => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(202).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/v2/spans`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
};

/** What tracing does for one order request the flood answers: the request's span and the admission's. */
const floodRequest = (tracer: Tracer): Promise<void> => {
  if (!tracer.draw()) return Promise.resolve();
  return tracer.root(
    'POST',
    async (span) => {
      await tracer.child(Spans.ADMISSION, span.traceparent, () => Promise.resolve());
      span.rename('POST /api/v1/seckill/orders');
      span.set({ 'http.response.status_code': 409, 'seckill.correlation_id': 'bench' });
    },
    { kind: 'server', attributes: { 'http.request.method': 'POST' } },
  );
};

/** CPU µs per request of `n` flood requests' tracing, the spans' export included. */
const cpuPerRequest = async (tracer: Tracer, flush: () => Promise<void>, n: number): Promise<number> => {
  for (let i = 0; i < n / 10; i += 1) await floodRequest(tracer);
  await flush();
  const start = process.cpuUsage();
  for (let i = 0; i < n; i += 1) {
    await floodRequest(tracer);
    // a turn of the event loop now and then, as requests get: the batch processor's timer and the export run
    if (i % 256 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await flush();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
};

export type SpanCost = Readonly<{ offMicros: number; unsampledMicros: number; sampledMicros: number }>;

/**
 * The tracing of one flood request on its own, in this process, with no HTTP and no other work around it: off,
 * on and not drawn, and on and sampled (two spans, exported to a null sink). What the service itself spends on a
 * trace, apart from what a span intake on the same cores takes from it.
 */
export const floodTracingCost = async (n = 20_000): Promise<SpanCost> => {
  const sink = await nullSink();
  const sampled = startOtelTracing({ serviceName: 'bench', sampleRatio: 1, zipkinUrl: sink.url });
  const unsampled = startOtelTracing({ serviceName: 'bench', sampleRatio: 0, zipkinUrl: sink.url });
  try {
    const none = () => Promise.resolve();
    return {
      offMicros: await cpuPerRequest(NO_TRACING, none, n),
      unsampledMicros: await cpuPerRequest(unsampled.tracer, unsampled.flush, n),
      sampledMicros: await cpuPerRequest(sampled.tracer, sampled.flush, n),
    };
  } finally {
    await Promise.all([sampled.shutdown(), unsampled.shutdown()]);
    await sink.close();
  }
};
