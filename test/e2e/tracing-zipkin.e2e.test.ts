import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { ZipkinServer } from '../../scripts/zipkin/server.js';
import { launchChromium } from '../support/dashboard-browser.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient } from '../support/e2e-service.js';
import { listeningUrl, startService, type WorkerProcess } from '../support/processes.js';
import { createRealStack, type RealStack, TEST_SECRET } from '../support/real-stack.js';

/** A span as Zipkin's API answers it (v2 JSON). */
type ZipkinSpan = Readonly<{
  traceId: string;
  id: string;
  parentId?: string;
  name: string;
  kind?: string;
  timestamp: number;
  duration?: number;
  localEndpoint: { serviceName: string };
  tags?: Record<string, string>;
}>;

/** A buyer's own trace context, as a browser or a gateway in front of the service would send it. */
const newTraceparent = (): { traceId: string; traceparent: string } => {
  const traceId = randomBytes(16).toString('hex');
  return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
};

const SCREENSHOT = fileURLToPath(new URL('../../docs/zipkin-trace.png', import.meta.url));

/** The order request's span, named by its route (Zipkin keeps span names in lower case). */
const REQUEST = 'post /api/v1/seckill/orders';

/** One span of the trace by name, and the process (Zipkin's service name) that recorded it. */
const named = (trace: readonly ZipkinSpan[], name: string): ZipkinSpan[] =>
  trace.filter((s) => s.name === name);

describe('an order traced end to end, seen in Zipkin', () => {
  let zipkin: ZipkinServer;
  let zipkinDir: string;
  let stack: RealStack;
  let apiProcess: WorkerProcess;
  let workerProcess: WorkerProcess;
  let api: ApiClient;

  /** The trace Zipkin holds under this id (empty until its spans arrive). */
  const traceOf = async (traceId: string): Promise<ZipkinSpan[]> => {
    const answer = await fetch(`${zipkin.url}/api/v2/trace/${traceId}`);
    return answer.ok ? ((await answer.json()) as ZipkinSpan[]) : [];
  };

  /** Waits until the trace holds every span named (the processes export in batches, twice a second here). */
  const traceWith = async (traceId: string, names: readonly string[]): Promise<ZipkinSpan[]> => {
    let trace: ZipkinSpan[] = [];
    await eventually(
      async () => {
        trace = await traceOf(traceId);
        expect(names.filter((n) => named(trace, n).length === 0)).toEqual([]);
      },
      60_000,
      250,
    );
    return trace;
  };

  beforeAll(async () => {
    zipkinDir = mkdtempSync(join(tmpdir(), 'seckill-zipkin-'));
    [zipkin, stack] = await Promise.all([
      ZipkinServer.start({ dir: zipkinDir, say: () => undefined }),
      createRealStack(),
    ]);
    const tracing = {
      SECKILL_OTEL_ZIPKIN_URL: zipkin.spansUrl,
      SECKILL_OTEL_SAMPLE_RATIO: '1',
      // spans leave each process twice a second (OpenTelemetry's batch processor; 5 s by default)
      OTEL_BSP_SCHEDULE_DELAY: '500',
      // an unpaid order is released 3 s after its commit, looked for twice a second
      SECKILL_PAYMENT_TIMEOUT_MS: '3000',
      SECKILL_PAYMENT_SCAN_MS: '500',
    };
    apiProcess = startService('serve', { ...stack.env, ...tracing });
    workerProcess = startService('worker', { ...stack.env, ...tracing });
    api = new ApiClient(await listeningUrl(apiProcess), TEST_SECRET);
  }, 180_000);

  afterAll(async () => {
    await Promise.all([apiProcess?.stop(), workerProcess?.stop()]);
    await stack?.stop();
    await zipkin?.stop();
    if (zipkinDir) rmSync(zipkinDir, { recursive: true, force: true });
  });

  it('shows the buyer request, the gate, the transactions, the produce and the consume across the API and the worker; the timeout release joins the trace', async () => {
    const productId = await api.listProduct({ name: 'Traced', stock: 5, perUserLimit: 1, maxPerOrder: 1 });
    const place = async (buyer: string) => {
      const { traceId, traceparent } = newTraceparent();
      const token = await api.token(buyer);
      const answer = await api.request('POST', '/api/v1/seckill/orders', {
        token,
        json: { productId, quantity: 1 },
        headers: { traceparent },
      });
      expect(answer.status).toBe(202);
      return {
        traceId,
        token,
        orderId: String(answer.body['orderId']),
        correlationId: answer.headers.get('x-request-id'),
      };
    };
    const paid = await place('traced-buyer-paid');
    const unpaid = await place('traced-buyer-unpaid');
    const statusOf = async (order: { orderId: string; token: string }) =>
      (await api.request('GET', `/api/v1/orders/${order.orderId}`, { token: order.token })).body['status'];
    await eventually(async () => expect(await statusOf(paid)).toBe('COMMITTED'), 30_000, 100);
    const payment = await api.request('POST', `/api/v1/orders/${paid.orderId}/payment`, {
      token: paid.token,
    });
    expect(payment.status).toBe(200);

    // the paid order's trace: the request on the API, the consumer's batch and its commit on the worker
    const trace = await traceWith(paid.traceId, [
      REQUEST,
      'order.admission',
      'gate.reserve',
      'reserve.transaction',
      'outbox.produce',
      'consume seckill.orders.reserved',
      'commit.transaction',
    ]);
    const [request] = named(trace, REQUEST);
    expect(request).toMatchObject({ kind: 'SERVER', localEndpoint: { serviceName: 'seckill-api' } });
    // the correlation id the buyer got back is on the request's span: the id in the logs finds the trace
    expect(request!.tags?.['seckill.correlation_id']).toBe(paid.correlationId);
    expect(request!.tags?.['http.response.status_code']).toBe('202');
    for (const name of ['order.admission', 'gate.reserve', 'reserve.transaction', 'outbox.produce'])
      expect(named(trace, name)[0]).toMatchObject({
        parentId: request!.id,
        localEndpoint: { serviceName: 'seckill-api' },
      });
    expect(named(trace, 'outbox.produce')[0]!.kind).toBe('PRODUCER');
    // the consume and the commit run in the worker, in the buyer's trace (the traceparent rode in the Kafka headers)
    const [consume] = named(trace, 'consume seckill.orders.reserved');
    const [commit] = named(trace, 'commit.transaction');
    expect(consume).toMatchObject({ kind: 'CONSUMER', localEndpoint: { serviceName: 'seckill-worker' } });
    expect(commit).toMatchObject({ localEndpoint: { serviceName: 'seckill-worker' } });
    // in time order: the gate before the reservation's transaction, its commit, then the consumer's commit
    const at = (name: string) => named(trace, name)[0]!.timestamp;
    expect(at('gate.reserve')).toBeLessThan(at('reserve.transaction'));
    expect(at('reserve.transaction')).toBeLessThanOrEqual(at('consume seckill.orders.reserved'));
    expect(at('consume seckill.orders.reserved')).toBeLessThanOrEqual(at('commit.transaction'));
    // the payment is a request of its own, in a trace of its own: nothing released this order
    expect(named(trace, 'order.release')).toEqual([]);

    // the unpaid order: released by the payment timeout on the worker, the release and the gate's share back
    // (the compensation message) in the buyer's trace
    const released = await traceWith(unpaid.traceId, [
      REQUEST,
      'commit.transaction',
      'order.release',
      'outbox.produce',
      'consume seckill.stock.compensation',
    ]);
    expect(await statusOf(unpaid)).toBe('RELEASED');
    const [release] = named(released, 'order.release');
    expect(release).toMatchObject({ localEndpoint: { serviceName: 'seckill-worker' } });
    expect(release!.tags).toMatchObject({
      'seckill.order_id': unpaid.orderId,
      'seckill.release_reason': 'PAYMENT_TIMEOUT',
    });
    expect(named(released, 'consume seckill.stock.compensation')[0]).toMatchObject({
      kind: 'CONSUMER',
      localEndpoint: { serviceName: 'seckill-worker' },
    });
    // the release came after the order was committed, and the compensation after the release
    const [committed] = named(released, 'commit.transaction');
    expect(release!.timestamp).toBeGreaterThan(committed!.timestamp);
    expect(named(released, 'consume seckill.stock.compensation')[0]!.timestamp).toBeGreaterThanOrEqual(
      release!.timestamp,
    );

    // as an operator sees it: Zipkin's UI draws the trace, both processes and every step, from the request on
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
      await page.goto(`${zipkin.url}/zipkin/traces/${unpaid.traceId}`);
      await page.getByText('order.release').first().waitFor({ timeout: 30_000 });
      const shown = (await page.textContent('body')) ?? '';
      for (const name of ['seckill-api', 'seckill-worker', 'gate.reserve', 'commit.transaction'])
        expect(shown).toContain(name);
      await page.screenshot({ path: SCREENSHOT, fullPage: true });
    } finally {
      await browser.close();
    }
  }, 180_000);
});
