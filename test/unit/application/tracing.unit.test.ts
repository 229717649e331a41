import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { SpanStatusCode } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import {
  compensationMessageId,
  InfrastructureUnavailable,
  NO_TRACING,
  Spans,
} from '../../../src/application/index.js';
import { problemAnswers } from '../../../src/adapters/http/error-mapping.js';
import { traceRequests } from '../../../src/adapters/http/middleware/tracing.js';
import { locals, requestTracker, trackRequests } from '../../../src/adapters/http/middleware/tracking.js';
import { SequentialIds, SilentLogger } from '../../support/app-doubles.js';
import { orderStreamId } from '../../../src/domain/index.js';
import {
  carriedOnSampler,
  OtelTracer,
  type OtelTracing,
  startOtelTracing,
} from '../../../src/adapters/otel/otel-tracer.js';
import { type AppHarness, MINUTE, startApp } from '../../support/app-harness.js';

const exporter = new InMemorySpanExporter();
let tracing: OtelTracing;
const apps: AppHarness[] = [];

beforeAll(() => {
  // the service's own SDK set-up, every new trace recorded, the spans kept in memory instead of sent to Zipkin
  tracing = startOtelTracing({ serviceName: 'seckill-test', sampleRatio: 1, exporter });
});

afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  exporter.reset();
});

afterAll(async () => {
  await tracing.shutdown();
});

const traced = async (options: Parameters<typeof startApp>[0] = {}): Promise<AppHarness> => {
  const app = await startApp({ ...options, tracer: tracing.tracer });
  apps.push(app);
  return app;
};

/** The spans ended so far, once the SDK has handed them over. */
const spans = async (): Promise<ReadableSpan[]> => {
  await tracing.flush();
  return exporter.getFinishedSpans();
};

const inTrace = (all: readonly ReadableSpan[], traceId: string): string[] =>
  all.filter((s) => s.spanContext().traceId === traceId).map((s) => s.name);

/** A buyer's order placed in a request's span, as the HTTP layer hands it over; returns the order and its trace. */
const placeInRequest = async (app: AppHarness, userId: string, productId: number) =>
  tracing.tracer.root(
    'POST /api/v1/seckill/orders',
    async (span) => {
      const placed = await app.placeOrder.execute({
        userId,
        productId,
        quantity: 1,
        correlationId: `corr-${userId}`,
        traceparent: span.traceparent,
      });
      if (!placed.ok) throw new Error(`${userId} could not buy: ${placed.code}`);
      return { orderId: placed.orderId, traceparent: span.traceparent! };
    },
    { kind: 'server' },
  );

const NO_OBSERVER = {
  request: () => undefined,
  orderAnswer: () => undefined,
  render: () => Promise.resolve({ contentType: 'text/plain', body: '' }),
};

const traceIdOf = (traceparent: string): string => traceparent.split('-')[1]!;

describe('tracing an order through the application', () => {
  it('keeps the buyer trace with the order and its message, and records every step of the pipeline in it', async () => {
    const app = await traced();
    const productId = await app.listProduct({ stock: 3 });
    const { orderId, traceparent } = await placeInRequest(app, 'buyer-1', productId);
    await app.drained();

    // the outbox row carries the request's trace to the consumer, and the order's events keep it
    expect((await app.reservedRow(orderId)).headers['traceparent']).toBe(traceparent);
    const history = (await app.events.read(orderStreamId(orderId))).events;
    expect(history.map((e) => [e.event.type, e.traceparent])).toEqual([
      ['OrderReserved', traceparent],
      ['StockCommitted', traceparent],
    ]);
    expect(inTrace(await spans(), traceIdOf(traceparent)).sort()).toEqual(
      [
        'POST /api/v1/seckill/orders',
        Spans.ADMISSION,
        Spans.GATE,
        Spans.RESERVE_TRANSACTION,
        Spans.PRODUCE,
        `${Spans.CONSUME} seckill.orders.reserved`,
        Spans.COMMIT_TRANSACTION,
      ].sort(),
    );
  });

  it('records a batch once in each of its orders traces, and the relay re-send in the trace of the order it sends', async () => {
    const app = await traced();
    const productId = await app.listProduct({ stock: 5 });
    app.publisher.failing = true;
    const placed = [
      await placeInRequest(app, 'buyer-1', productId),
      await placeInRequest(app, 'buyer-2', productId),
    ];
    await app.dispatcher.settle();
    app.publisher.failing = false;
    app.clock.advance(MINUTE);
    const report = await app.relay.run();
    expect(report.published).toBe(2);
    await app.drained();

    const all = await spans();
    for (const { traceparent } of placed) {
      const names = inTrace(all, traceIdOf(traceparent));
      // the failed produce, then the relay's, then the consumer's batch and its commit, all in this trace
      expect(names).toEqual(
        expect.arrayContaining([Spans.PRODUCE, Spans.RELAY_PRODUCE, Spans.COMMIT_TRANSACTION]),
      );
      expect(names.filter((n) => n === Spans.RELAY_PRODUCE)).toHaveLength(1);
    }
    const failedProduce = all.filter((s) => s.name === Spans.PRODUCE);
    expect(failedProduce.every((s) => s.status.message === 'broker not available')).toBe(true);
    // one relay request, recorded in both traces
    const relays = all.filter((s) => s.name === Spans.RELAY_PRODUCE);
    expect(relays.map((s) => s.attributes['messaging.batch.message_count'])).toEqual([2, 2]);
  });

  it('puts the payment timeout release and the gate share back in the buyer trace', async () => {
    const app = await traced({ paymentTimeoutMs: 10 * MINUTE });
    const productId = await app.listProduct({ stock: 2 });
    const { orderId, traceparent } = await placeInRequest(app, 'buyer-1', productId);
    await app.drained();
    app.clock.advance(11 * MINUTE);
    expect(await app.releaseOrder.releaseExpired()).toBe(1);
    await app.drained();

    expect((await app.outboxRow(compensationMessageId(orderId))).headers['traceparent']).toBe(traceparent);
    const all = await spans();
    const [release] = all.filter((s) => s.name === Spans.RELEASE);
    expect(release?.spanContext().traceId).toBe(traceIdOf(traceparent));
    expect(release?.attributes).toMatchObject({
      'seckill.order_id': orderId,
      'seckill.release_reason': 'PAYMENT_TIMEOUT',
    });
    expect(inTrace(all, traceIdOf(traceparent))).toContain(`${Spans.CONSUME} seckill.stock.compensation`);
  });

  it('with tracing off, keeps and sends no trace', async () => {
    const app = await startApp({ tracer: NO_TRACING });
    apps.push(app);
    const productId = await app.listProduct({ stock: 1 });
    const orderId = await app.mustBuy('buyer-1', productId);
    await app.drained();
    expect((await app.reservedRow(orderId)).headers).not.toHaveProperty('traceparent');
    const history = (await app.events.read(orderStreamId(orderId))).events;
    expect(history.every((e) => e.traceparent === undefined)).toBe(true);
  });
});

/** An express app whose one route answers with the traceparent the request's span left for it (null: none). */
const listen = async (tracer: Parameters<typeof traceRequests>[0]): Promise<Server> => {
  const app = express();
  app.use(traceRequests(tracer));
  app.get('/order', (_req, res) => {
    res.json({ traceparent: locals(res).traceparent ?? null });
  });
  const listening = createServer(app);
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  return listening;
};

const urlOf = (server: Server): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}/order`;

describe('sampling', () => {
  // a tracer at ratio 0 on a provider of its own: no new trace drawn, only what a trace carries on is recorded
  const unsampled = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({
    sampler: carriedOnSampler(),
    spanProcessors: [new SimpleSpanProcessor(unsampled)],
  });
  const tracer = new OtelTracer(provider.getTracer('sampling'), 0);
  const sampledParent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  let server: Server | null = null;
  afterEach(async () => {
    unsampled.reset();
    const open = server;
    server = null;
    if (open) await new Promise((resolve) => open.close(resolve));
  });

  it('draws new traces at random by the ratio, none at 0 and every one at 1', () => {
    const share = (ratio: number) => {
      const drawing = new OtelTracer(provider.getTracer('draw'), ratio);
      let drawn = 0;
      for (let i = 0; i < 10_000; i++) if (drawing.draw()) drawn += 1;
      return drawn / 10_000;
    };
    expect(share(0)).toBe(0);
    expect(share(1)).toBe(1);
    expect(share(0.25)).toBeGreaterThan(0.2);
    expect(share(0.25)).toBeLessThan(0.3);
  });

  it('records no request it did not draw, whatever traceparent the caller sends', async () => {
    server = await listen(tracer);
    const callers = [
      undefined,
      // a caller that says its trace is sampled, and one that picks a trace id every ratio sampler takes
      sampledParent,
      '00-00000000000000000000000000000001-00f067aa0ba902b7-01',
    ];
    for (const traceparent of callers) {
      const answer = await fetch(urlOf(server), { headers: traceparent ? { traceparent } : {} });
      expect(await answer.json()).toEqual({ traceparent: null });
    }
    expect(unsampled.getFinishedSpans()).toEqual([]);
  });

  it('keeps recording a trace this deployment carried on (a message, an order)', async () => {
    const carried = await tracer.child('consume', sampledParent, (span) => Promise.resolve(span.traceparent));
    expect(carried).toMatch(/^00-0af7651916cd43dd8448eb211c80319c-[0-9a-f]{16}-01$/);
    await tracer.batch('commit', [sampledParent, sampledParent, undefined], () => Promise.resolve());
    expect(unsampled.getFinishedSpans().map((s) => [s.name, s.parentSpanContext?.spanId])).toEqual([
      ['consume', 'b7ad6b7169203331'],
      ['commit', 'b7ad6b7169203331'],
    ]);
  });

  it('makes a plain call of a step whose trace is not sampled or cannot be read', async () => {
    const unreadable = ['garbage', '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00', undefined];
    for (const parent of unreadable) {
      expect(await tracer.child('gate.reserve', parent, (span) => Promise.resolve(span.traceparent))).toBe(
        undefined,
      );
      tracer.record('order.release', parent, Date.now());
    }
    await tracer.batch('commit', unreadable, () => Promise.resolve());
    expect(unsampled.getFinishedSpans()).toEqual([]);
  });
});

describe('a 5xx answer in the logs', () => {
  let server: Server | null = null;
  afterEach(async () => {
    await new Promise((resolve) => server?.close(resolve));
    server = null;
  });

  it('names the trace and the span of the request it answered, and its correlation id', async () => {
    const logger = new SilentLogger();
    const app = express();
    app.use(traceRequests(tracing.tracer));
    app.use(trackRequests(requestTracker(new SequentialIds('request'), NO_OBSERVER)));
    app.get('/fails', () => {
      throw new InfrastructureUnavailable('database', 'down for the test');
    });
    app.use(problemAnswers(logger));
    const listening = createServer(app);
    server = listening;
    await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
    const { port } = listening.address() as AddressInfo;
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const answer = await fetch(`http://127.0.0.1:${port}/fails`, {
      headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(answer.status).toBe(503);
    const [line] = logger.entries.filter((e) => e.message === 'answered 503');
    const [request] = (await spans()).filter((s) => s.spanContext().traceId === traceId);
    expect(line?.details).toMatchObject({
      correlationId: answer.headers.get('x-request-id'),
      trace_id: traceId,
      span_id: request?.spanContext().spanId,
    });
    expect(request?.name).toBe('GET /fails');
    expect(request?.status).toEqual({ code: SpanStatusCode.ERROR, message: 'answered 503' });
  });
});
