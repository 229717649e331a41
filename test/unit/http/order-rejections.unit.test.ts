import { describe, expect, it } from '@jest/globals';
import { openApiDocument } from '../../../src/adapters/http/openapi.js';
import { ORDER_REJECTIONS } from '../../../src/adapters/http/order-rejections.js';
import { codeOf } from '../../../src/client/flood.js';

type Responses = Record<string, { description?: string }>;

const orderResponses = (): Responses => {
  const doc = openApiDocument('test') as unknown as {
    paths: Record<string, { post?: { responses?: Responses } }>;
  };
  return doc.paths['/api/v1/seckill/orders']?.post?.responses ?? {};
};

describe('the order route refusal codes, one table for the route, the OpenAPI document and the client', () => {
  const codes = Object.entries(ORDER_REJECTIONS);

  it.each(codes)('the OpenAPI document describes %s under its status', (code, { status }) => {
    expect(orderResponses()[String(status)]?.description).toContain(code);
  });

  it.each(codes)('the load client counts %s by its name, not as a bare HTTP status', (code, { status }) => {
    expect(codeOf(status, { code })).toBe(code);
  });

  it('the load client counts 503 UNAVAILABLE by name, and an unknown code with its status', () => {
    expect(codeOf(503, { code: 'UNAVAILABLE' })).toBe('UNAVAILABLE');
    expect(codeOf(418, { code: 'TEAPOT' })).toBe('HTTP 418 TEAPOT');
    expect(codeOf(202, { orderId: 'x' })).toBe('ACCEPTED');
  });
});
