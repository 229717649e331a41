import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';
import { routesOf } from '../support/express-routes.js';

type Operation = {
  operationId?: string;
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<string, unknown>;
};
type Document = {
  openapi: string;
  info: { title: string; version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
};

describe('the OpenAPI document', () => {
  let service: SeckillService;
  let api: ApiClient;
  let doc: Document;

  beforeAll(async () => {
    service = await startMemoryService();
    api = new ApiClient(service.url, service.config.jwtSecret);
    const response = await fetch(`${service.url}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    doc = (await response.json()) as Document;
  });

  afterAll(async () => {
    await service.close();
  });

  const operations = () =>
    Object.entries(doc.paths)
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();

  it('is OpenAPI 3.1 with the package version', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toMatchObject({ title: 'seckill', version: expect.stringMatching(/^\d+\.\d+\.\d+/) });
  });

  it('documents every route the service answers, and no route it does not', () => {
    const routes = routesOf(service.httpApp!);
    expect(routes.length).toBeGreaterThan(10);
    expect(operations()).toEqual(routes);
  });

  it('documents the order body with the limits the route enforces', async () => {
    const operation = doc.paths['/api/v1/seckill/orders']!['post']!;
    const schema = operation.requestBody!.content['application/json']!.schema as {
      required: string[];
      additionalProperties: boolean;
      properties: { quantity: { maximum: number; minimum: number } };
    };
    expect(schema.required.sort()).toEqual(['productId', 'quantity']);
    expect(schema.additionalProperties).toBe(false);
    const productId = await api.listProduct({ name: 'Kettle', stock: 5, perUserLimit: 1, maxPerOrder: 1 });
    const token = await api.token('doc-reader');
    const order = (quantity: number, extra: object = {}) =>
      api.request('POST', '/api/v1/seckill/orders', { token, json: { productId, quantity, ...extra } });
    // one past the documented maximum is a validation failure; the maximum itself passes validation
    const over = await order(schema.properties.quantity.maximum + 1);
    expect(over).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
    const atMax = await order(schema.properties.quantity.maximum);
    expect(atMax.body['code']).not.toBe('VALIDATION_FAILED');
    const extra = await order(1, { userId: 'someone-else' });
    expect(extra).toMatchObject({ status: 400, body: { code: 'VALIDATION_FAILED' } });
  });

  it('names the problem answers of each operation and shares one Problem schema', () => {
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['Problem', 'Order']));
    const placeOrder = doc.paths['/api/v1/seckill/orders']!['post']!;
    expect(Object.keys(placeOrder.responses).sort()).toEqual(
      ['202', '400', '401', '403', '404', '409', '413', '415', '422', '429', '503'].sort(),
    );
    expect(placeOrder.responses['429']).toMatchObject({ headers: { 'Retry-After': expect.anything() } });
    expect(Object.keys(doc.paths['/api/v1/seckill/products/{productId}/path']!['post']!.responses)).toEqual(
      expect.arrayContaining(['200', '404', '409', '429']),
    );
  });

  it("documents the Idempotency-Key of an order, its replay header, and the buyer's own orders", () => {
    const placeOrder = doc.paths['/api/v1/seckill/orders']!['post']! as unknown as {
      parameters: Array<{ in: string; name: string; required?: boolean; schema: { pattern?: string } }>;
      responses: Record<string, { headers?: Record<string, unknown> }>;
    };
    expect(placeOrder.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          in: 'header',
          name: 'Idempotency-Key',
          schema: expect.objectContaining({ pattern: expect.any(String) }),
        }),
      ]),
    );
    // optional: an order without a key is taken as before
    expect(placeOrder.parameters.find((p) => p.name === 'Idempotency-Key')?.required).not.toBe(true);
    expect(Object.keys(placeOrder.responses['202']!.headers ?? {})).toEqual(
      expect.arrayContaining(['Location', 'Idempotent-Replayed']),
    );
    const mine = doc.paths['/api/v1/orders']!['get']! as unknown as {
      parameters: Array<{ in: string; name: string }>;
      responses: Record<string, unknown>;
    };
    expect(mine.parameters.map((p) => `${p.in}:${p.name}`).sort()).toEqual([
      'query:cursor',
      'query:limit',
      'query:productId',
    ]);
    expect(Object.keys(mine.responses)).toEqual(expect.arrayContaining(['200', '400', '401']));
  });

  it('is viewable at /docs in Swagger UI, which loads this document', async () => {
    const page = await fetch(`${service.url}/docs/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const html = await page.text();
    expect(html).toContain('swagger-ui');
    const init = await fetch(`${service.url}/docs/swagger-ui-init.js`);
    expect(init.status).toBe(200);
    expect(await init.text()).toContain('/api/v1/openapi.json');
  });
});
