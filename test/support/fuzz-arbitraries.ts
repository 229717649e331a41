import { createHmac } from 'node:crypto';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { SignJWT, UnsecuredJWT } from 'jose';

/**
 * fast-check arbitraries of malformed or hostile HTTP requests for the seckill API. Every request they
 * generate must be refused (a 4xx problem+json) and must write nothing: a body that would be a legitimate
 * order only ever goes with something that makes the service refuse it (a bad token, a wrong content type,
 * a wrong method, an unknown route) and never comes from the owner of the order the fixture placed.
 */

export const CATEGORIES = [
  'types',
  'sizes',
  'encodings',
  'prototype',
  'tokens',
  'ids',
  'routes',
  'admin',
] as const;
export type Category = (typeof CATEGORIES)[number];

export type Header = readonly [name: string, value: string];

export type FuzzRequest = Readonly<{
  category: Category;
  label: string;
  method: string;
  /** the request target exactly as sent (no normalisation) */
  path: string;
  /** in order; a name may repeat */
  headers: readonly Header[];
  body?: Uint8Array;
  /** the only statuses this request may get; any 4xx when absent */
  expect?: readonly number[];
}>;

export type FuzzFixture = Readonly<{
  /** on sale now; perUserLimit = maxPerOrder = 1 */
  openProductId: number;
  /** its sale starts in 2099 */
  closedProductId: number;
  /** listed with no stock */
  soldOutProductId: number;
  /** an order of the user "owner", placed before the run */
  ownerOrderId: string;
  ownerToken: string;
  /** valid user tokens of users other than the owner (odd but legal subjects included) */
  userTokens: readonly string[];
  adminToken: string;
  /** signed or crafted tokens the service must refuse with a 401, by what is wrong with them */
  badTokens: ReadonlyArray<readonly [label: string, token: string]>;
}>;

export const MAX_ID = 2_147_483_647;
const MAX_QUANTITY = 10_000;
const BODY_LIMIT = 16 * 1024;
/** product ids at or above this are never listed by the fixture */
const UNKNOWN_PRODUCT_FROM = 100_000;

export const ROUTES = {
  orders: '/api/v1/seckill/orders',
  myOrders: '/api/v1/orders',
  order: (id: string) => `/api/v1/orders/${id}`,
  payment: (id: string) => `/api/v1/orders/${id}/payment`,
  cancel: (id: string) => `/api/v1/orders/${id}/cancel`,
  product: (id: string) => `/api/v1/products/${id}`,
  salePath: (id: string) => `/api/v1/seckill/products/${id}/path`,
  adminProducts: '/api/v1/admin/products',
  restock: (id: string) => `/api/v1/admin/products/${id}/stock`,
  reconciliations: '/api/v1/admin/reconciliations',
  audit: '/api/v1/admin/audit',
} as const;

/** Every route the service has (express matches case-insensitively, with an optional trailing slash). */
const KNOWN_ROUTES: ReadonlyArray<readonly [method: string, pattern: RegExp]> = [
  ['GET', /^\/(healthz|readyz|metrics)\/?$/i],
  ['POST', /^\/api\/v1\/seckill\/orders\/?$/i],
  ['GET', /^\/api\/v1\/orders\/?$/i],
  ['GET', /^\/api\/v1\/orders\/[^/]+\/?$/i],
  ['POST', /^\/api\/v1\/orders\/[^/]+\/(payment|cancel)\/?$/i],
  ['GET', /^\/api\/v1\/products\/[^/]+\/?$/i],
  ['POST', /^\/api\/v1\/seckill\/products\/[^/]+\/path\/?$/i],
  ['POST', /^\/api\/v1\/admin\/(products|reconciliations)\/?$/i],
  ['POST', /^\/api\/v1\/admin\/products\/[^/]+\/stock\/?$/i],
  ['GET', /^\/api\/v1\/admin\/audit\/?$/i],
];

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const safeDecode = (s: string): string | null => {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
};

/** True when some route answers `path` (raw or decoded) for some method. */
export const matchesKnownRoute = (path: string): boolean => {
  const bare = path.split('?')[0] ?? '';
  const decoded = safeDecode(bare);
  return KNOWN_ROUTES.some(([, re]) => re.test(bare) || (decoded !== null && re.test(decoded)));
};

/** An order id the service could take for a real one once decoded. */
const decodesToUuid = (id: string): boolean => {
  const decoded = safeDecode(id);
  return UUID.test(id) || (decoded !== null && UUID.test(decoded.trim()));
};

/** A product id the service would take for one the fixture listed (it decodes the path, then /^[1-9][0-9]{0,9}$/). */
const couldBeListedProduct = (id: string): boolean =>
  [id, safeDecode(id) ?? ''].some((s) => /^[1-9][0-9]{0,9}$/.test(s) && Number(s) < UNKNOWN_PRODUCT_FROM);

const isIntIn = (v: unknown, min: number, max: number): boolean =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

const isValidOrderShape = (v: unknown): boolean => {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  const keys = Object.keys(v).sort();
  const o = v as Record<string, unknown>;
  return (
    keys.join(',') === 'productId,quantity' &&
    isIntIn(o['productId'], 1, MAX_ID) &&
    isIntIn(o['quantity'], 1, MAX_QUANTITY)
  );
};

const utf8 = (s: string): Uint8Array => new TextEncoder().encode(s);
const concat = (...parts: ReadonlyArray<Uint8Array | string>): Uint8Array =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? utf8(p) : p)));

const bearer = (token: string): Header => ['authorization', `Bearer ${token}`];
const JSON_TYPE: Header = ['content-type', 'application/json'];
const json = (value: unknown): string => JSON.stringify(value) ?? 'null';

type Parts = Readonly<{
  label: string;
  method: string;
  path: string;
  headers?: readonly Header[];
  body?: Uint8Array | string;
  expect?: readonly number[];
}>;

const make =
  (category: Category) =>
  (p: Parts): FuzzRequest => ({
    category,
    label: p.label,
    method: p.method,
    path: p.path,
    headers: p.headers ?? [],
    ...(p.body === undefined ? {} : { body: typeof p.body === 'string' ? utf8(p.body) : p.body }),
    ...(p.expect ? { expect: p.expect } : {}),
  });

// ---------------------------------------------------------------------------------------------- values

/** `{"a":{"a":…}}`, `depth` levels. */
const nestedObject = (depth: number): unknown => {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
};

/** Any JSON value except an integer in [min, max]. */
const wrongValue = (min: number, max: number): fc.Arbitrary<unknown> =>
  fc
    .oneof(
      fc.string({ maxLength: 40 }),
      fc.integer({ min, max }).map(String),
      fc.constantFrom('NaN', 'Infinity', '-Infinity', '1e400', '0x10', ' 1', '1 ', '', '١', '１', 'null'),
      fc.double({ noNaN: true, noDefaultInfinity: true }).filter((n) => !Number.isInteger(n)),
      fc.integer({ min: -MAX_ID, max: min - 1 }),
      fc.integer({ min: max + 1, max: Number.MAX_SAFE_INTEGER }),
      fc.constantFrom(1e20, 1.7976931348623157e308, Number.MAX_SAFE_INTEGER + 2, 5e-324, 0.1 + 0.2),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.integer({ min: 1, max: 10 }), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
      fc.integer({ min: 10, max: 300 }).map(nestedObject),
    )
    .filter((v) => !isIntIn(v, min, max));

const wrongProductId = wrongValue(1, MAX_ID);
const wrongQuantity = wrongValue(1, MAX_QUANTITY);

type Labelled<T> = readonly [label: string, value: T];

/** Order bodies that fail validation whoever sends them. */
const invalidOrderBody = (fx: FuzzFixture): fc.Arbitrary<Labelled<unknown>> =>
  fc.oneof(
    {
      weight: 5,
      arbitrary: fc
        .record({
          productId: fc.oneof(wrongProductId, fc.constant(fx.openProductId)),
          quantity: fc.oneof(wrongQuantity, fc.constant(1)),
        })
        .filter((b) => !isValidOrderShape(b))
        .map((b) => ['wrong field types', b] as const),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom<unknown>(
          { quantity: 1 },
          { productId: fx.openProductId },
          {},
          { productid: 1, Quantity: 1 },
        )
        .map((b) => ['missing fields', b] as const),
    },
    {
      weight: 2,
      arbitrary: fc
        .record({
          key: fc.oneof(
            fc.constantFrom('userId', 'role', 'sub', 'admin', 'orderId', 'status', 'price', 'productId '),
            fc.string({ minLength: 1, maxLength: 12 }),
          ),
          value: fc.jsonValue({ maxDepth: 1 }),
        })
        .filter(({ key }) => !['productId', 'quantity', 'pathToken'].includes(key))
        .map(
          ({ key, value }) =>
            ['extra field', { productId: fx.openProductId, quantity: 1, [key]: value }] as const,
        ),
    },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          fc.string({ maxLength: 30 }),
          fc.integer(),
          fc.boolean(),
          fc.constant(null),
          fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 4 }),
          fc.constant([{ productId: fx.openProductId, quantity: 1 }]),
        )
        .map((b) => ['body not an object', b] as const),
    },
    {
      weight: 1,
      arbitrary: fc
        .jsonValue({ maxDepth: 3 })
        .filter((b) => !isValidOrderShape(b))
        .map((b) => ['random JSON', b] as const),
    },
  );

/** Well-formed orders the business rules refuse from anyone: closed, sold out, unknown, too many. */
const refusedOrderBody = (fx: FuzzFixture): fc.Arbitrary<Labelled<unknown>> =>
  fc.oneof(
    fc
      .record({
        productId: fc.constant(fx.closedProductId),
        quantity: fc.integer({ min: 1, max: MAX_QUANTITY }),
      })
      .map((b) => ['sale not started', b] as const),
    fc
      .record({
        productId: fc.constant(fx.soldOutProductId),
        quantity: fc.integer({ min: 1, max: MAX_QUANTITY }),
      })
      .map((b) => ['sold out', b] as const),
    fc
      .record({
        productId: fc.integer({ min: UNKNOWN_PRODUCT_FROM, max: MAX_ID }),
        quantity: fc.integer({ min: 1, max: MAX_QUANTITY }),
      })
      .map((b) => ['unknown product', b] as const),
    fc
      .record({
        productId: fc.constant(fx.openProductId),
        quantity: fc.integer({ min: 2, max: MAX_QUANTITY }),
      })
      .map((b) => ['more than maxPerOrder', b] as const),
  );

/** Any order body the service must refuse from a valid user other than the owner. */
const rejectedOrderBody = (fx: FuzzFixture): fc.Arbitrary<Labelled<unknown>> =>
  fc.oneof({ weight: 3, arbitrary: invalidOrderBody(fx) }, { weight: 1, arbitrary: refusedOrderBody(fx) });

const rejectedOrderText = (fx: FuzzFixture): fc.Arbitrary<string> =>
  rejectedOrderBody(fx).map(([, body]) => json(body));

const anyUser = (fx: FuzzFixture) => fc.constantFrom(fx.ownerToken, fx.adminToken, ...fx.userTokens);
const notOwner = (fx: FuzzFixture) => fc.constantFrom(fx.adminToken, ...fx.userTokens);
const validOrder = (fx: FuzzFixture): string => json({ productId: fx.openProductId, quantity: 1 });

const oddQuery = fc.oneof(
  fc.constantFrom(
    '?__proto__[admin]=1',
    '?constructor[prototype][isAdmin]=true',
    '?a=1&a=2&a=3',
    '?%ZZ=%ZZ',
    '?&&&==&',
    '?userId=owner&role=admin&sub=owner',
    '?x=%00',
    '?x[]=1&x[]=2',
    '?;',
    '?#frag',
  ),
  fc.string({ unit: 'grapheme', maxLength: 60 }).map((s) => `?q=${encodeURIComponent(s)}`),
  fc.integer({ min: 2_000, max: 6_000 }).map((n) => `?long=${'x'.repeat(n)}`),
);

const maybeQuery = fc.oneof({ weight: 3, arbitrary: fc.constant('') }, { weight: 1, arbitrary: oddQuery });

// ---------------------------------------------------------------------------------------------- types

const typesArb = (fx: FuzzFixture): fc.Arbitrary<FuzzRequest> => {
  const r = make('types');
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc.tuple(anyUser(fx), invalidOrderBody(fx)).map(([token, [label, body]]) =>
        r({
          label,
          method: 'POST',
          path: ROUTES.orders,
          headers: [bearer(token), JSON_TYPE],
          body: json(body),
          expect: [400],
        }),
      ),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(notOwner(fx), refusedOrderBody(fx)).map(([token, [label, body]]) =>
        r({
          label,
          method: 'POST',
          path: ROUTES.orders,
          headers: [bearer(token), JSON_TYPE],
          body: json(body),
          expect: [404, 409, 429],
        }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constant(
        r({
          label: 'the owner buys again past perUserLimit',
          method: 'POST',
          path: ROUTES.orders,
          headers: [bearer(fx.ownerToken), JSON_TYPE],
          body: validOrder(fx),
          expect: [409, 429],
        }),
      ),
    },
  );
};

// ---------------------------------------------------------------------------------------------- sizes

const sizesArb = (fx: FuzzFixture): fc.Arbitrary<FuzzRequest> => {
  const r = make('sizes');
  const post = (label: string, token: string, body: string, expect?: readonly number[]) =>
    r({
      label,
      method: 'POST',
      path: ROUTES.orders,
      headers: [bearer(token), JSON_TYPE],
      body,
      ...(expect ? { expect } : {}),
    });
  const big = fc.integer({ min: BODY_LIMIT + 1, max: 64 * 1024 });
  return fc.oneof(
    fc
      .tuple(notOwner(fx), big)
      .map(([t, n]) =>
        post(
          'body over 16 KiB (padding)',
          t,
          json({ productId: fx.openProductId, quantity: 1, pad: 'x'.repeat(n) }),
          [413],
        ),
      ),
    fc
      .tuple(notOwner(fx), big)
      .map(([t, n]) => post('body over 16 KiB (array)', t, `[${'1,'.repeat(n / 2)}1]`, [413])),
    fc.tuple(anyUser(fx), fc.integer({ min: 50, max: 1_200 })).map(([t, n]) => {
      const body: Record<string, number> = { productId: fx.openProductId, quantity: 1 };
      for (let i = 0; i < n; i++) body[`k${i}`] = i;
      return post(`${n + 2} keys`, t, json(body), [400]);
    }),
    fc
      .tuple(anyUser(fx), fc.integer({ min: 100, max: 8_000 }))
      .map(([t, d]) => post(`arrays nested ${d} deep`, t, `${'['.repeat(d)}${']'.repeat(d)}`, [400])),
    fc
      .tuple(anyUser(fx), fc.integer({ min: 100, max: 2_600 }))
      .map(([t, d]) =>
        post(
          `productId: objects nested ${d} deep`,
          t,
          json({ productId: nestedObject(d), quantity: 1 }),
          [400],
        ),
      ),
    fc
      .tuple(
        anyUser(fx),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
        fc.integer({ min: 100, max: 2_000 }),
      )
      .map(([t, s, n]) => post('productId: a long string', t, json({ productId: s.repeat(n), quantity: 1 }))),
    fc.tuple(anyUser(fx), fc.integer({ min: 40, max: 4_000 })).map(([t, n]) =>
      r({
        label: 'a very long order id',
        method: 'GET',
        path: ROUTES.order('a'.repeat(n)),
        headers: [bearer(t)],
        expect: [400],
      }),
    ),
    fc.integer({ min: 11, max: 4_000 }).map((n) =>
      r({
        label: 'a very long product id',
        method: 'GET',
        path: ROUTES.product('9'.repeat(n)),
        expect: [400],
      }),
    ),
    fc.tuple(notOwner(fx), fc.integer({ min: 2_000, max: 4_000 })).map(([t, n]) =>
      r({
        label: 'long header values',
        method: 'POST',
        path: ROUTES.orders,
        headers: [bearer(t), JSON_TYPE, ['x-request-id', 'r'.repeat(n)], ['x-filler', 'f'.repeat(n)]],
        body: json({ productId: fx.closedProductId, quantity: 1 }),
        expect: [409],
      }),
    ),
    fc.tuple(notOwner(fx), fc.integer({ min: 50, max: 400 })).map(([t, n]) =>
      r({
        label: `${n} extra headers`,
        method: 'POST',
        path: ROUTES.orders,
        headers: [
          bearer(t),
          JSON_TYPE,
          ...Array.from({ length: n }, (_, i): Header => [`x-h${i}`, String(i)]),
        ],
        body: json({ productId: fx.openProductId, quantity: 0 }),
        expect: [400],
      }),
    ),
  );
};

// ---------------------------------------------------------------------------------------------- encodings

/** Content types that are not JSON: a valid order in them must get a 415. */
const NOT_JSON = [
  null,
  '',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=xyz',
  'application/xml',
  'text/json',
  'application/octet-stream',
  'application/jsonx',
  'json',
  'application/vnd.api+json',
  'application/merge-patch+json',
  'text/html',
  '*/*',
  'application/*',
  'application/ json',
  'application/json, text/plain',
] as const;

/** JSON content types with odd parameters: the body decides. */
const JSONISH = [
  'application/json; charset=latin1',
  'application/json; charset=iso-8859-1',
  'application/json; charset=us-ascii',
  'application/json; charset=utf-16',
  'application/json; charset=utf-16le',
  'application/json; charset=utf-16be',
  'application/json; charset=utf-32',
  'application/json; charset=utf-7',
  'application/json; charset=utf-99',
  'application/json; charset=UTF-8',
  'application/json; charset="utf-8"',
  'application/json; charset=utf8',
  'application/json; charset=',
  'application/json;;;',
  'APPLICATION/JSON',
  'application/json; foo=bar',
  'application/json ; charset=utf-8',
];

/** Byte sequences that are not UTF-8: lone continuations, overlongs, surrogates, beyond U+10FFFF. */
const invalidUtf8 = fc.oneof(
  fc.constantFrom(
    Uint8Array.of(0x80),
    Uint8Array.of(0xbf),
    Uint8Array.of(0xc0, 0xaf),
    Uint8Array.of(0xc1, 0xbf),
    Uint8Array.of(0xe0, 0x80, 0xaf),
    Uint8Array.of(0xed, 0xa0, 0x80),
    Uint8Array.of(0xf4, 0x90, 0x80, 0x80),
    Uint8Array.of(0xf8, 0x88, 0x80, 0x80, 0x80),
    Uint8Array.of(0xfe),
    Uint8Array.of(0xff, 0xfe),
    Uint8Array.of(0xe2, 0x82),
  ),
  fc.uint8Array({ minLength: 1, maxLength: 8 }).map((a) => a.map((b) => b | 0x80)),
);

/** Texts that are not JSON although they look like an order (a lenient parser would take them). */
const malformedJson = (fx: FuzzFixture): fc.Arbitrary<Labelled<string>> => {
  const valid = validOrder(fx);
  const p = fx.openProductId;
  return fc.oneof(
    fc.integer({ min: 1, max: valid.length - 1 }).map((n) => ['truncated JSON', valid.slice(0, n)] as const),
    fc.constantFrom<Labelled<string>>(
      ['JSON with a block comment', `{/* c */"productId":${p},"quantity":1}`],
      ['JSON with a line comment', `// order\n${valid}`],
      ['trailing comma', `{"productId":${p},"quantity":1,}`],
      ['single quotes', `{'productId':${p},'quantity':1}`],
      ['unquoted keys', `{productId:${p},quantity:1}`],
      ['two objects', `${valid}${valid}`],
      ['JSONP', `cb(${valid})`],
      ['XSSI prefix', `)]}',\n${valid}`],
      ['non-JSON whitespace', `\u00a0${valid}`],
      ['hex number', `{"productId":0x${p.toString(16)},"quantity":1}`],
      ['undefined literal', `{"productId":${p},"quantity":undefined}`],
      ['NaN literal', `{"productId":${p},"quantity":NaN}`],
      ['Infinity literal', `{"productId":Infinity,"quantity":1}`],
      ['plus sign', `{"productId":+${p},"quantity":1}`],
      ['leading zero', `{"productId":0${p},"quantity":1}`],
      ['bare dot', `{"productId":${p},"quantity":.5}`],
      ['lone surrogate escape', `{"productId":${p},"quantity":1,"\\ud800":1}`],
      ['control character in a string', `{"productId":"\u0001","quantity":1}`],
      ['empty', ''],
      ['only whitespace', ' \n\t '],
    ),
  );
};

/** Number literals JSON.parse takes, some of which turn into valid integers (1.0, 1e0). */
const NUMBER_LITERALS = [
  '1e400',
  '-1e400',
  '1e-400',
  '-0',
  '1.0',
  '1e0',
  '10e-1',
  '1.0000000000000001',
  '2147483648',
];

const encodingsArb = (fx: FuzzFixture): fc.Arbitrary<FuzzRequest> => {
  const r = make('encodings');
  const post = (
    label: string,
    token: string,
    headers: readonly Header[],
    body: Uint8Array | string,
    expect?: readonly number[],
  ) =>
    r({
      label,
      method: 'POST',
      path: ROUTES.orders,
      headers: [bearer(token), ...headers],
      body,
      ...(expect ? { expect } : {}),
    });
  return fc.oneof(
    fc
      .tuple(notOwner(fx), fc.constantFrom(...NOT_JSON), fc.boolean())
      .map(([t, type, valid]) =>
        post(
          `content type ${JSON.stringify(type)}`,
          t,
          type === null ? [] : [['content-type', type]],
          valid ? validOrder(fx) : 'productId=1&quantity=1',
          [415],
        ),
      ),
    fc
      .tuple(
        notOwner(fx),
        fc.constantFrom(...JSONISH),
        rejectedOrderText(fx),
        fc.constantFrom('utf8', 'utf16le', 'latin1', 'utf16be'),
      )
      .map(([t, type, text, encoding]) => {
        const bytes =
          encoding === 'utf16be'
            ? Buffer.from(text, 'utf16le').swap16()
            : Buffer.from(text, encoding as BufferEncoding);
        return post(`${type} with a ${encoding} body`, t, [['content-type', type]], bytes);
      }),
    fc
      .tuple(notOwner(fx), malformedJson(fx))
      .map(([t, [label, text]]) => post(label, t, [JSON_TYPE], text, [400])),
    fc
      .tuple(notOwner(fx), fc.constantFrom(...NUMBER_LITERALS), fc.boolean())
      .map(([t, literal, inProductId]) =>
        post(
          `number literal ${literal}`,
          t,
          [JSON_TYPE],
          inProductId
            ? `{"productId":${literal},"quantity":0}`
            : `{"productId":${fx.closedProductId},"quantity":${literal}}`,
          [400, 409],
        ),
      ),
    fc
      .tuple(notOwner(fx), rejectedOrderText(fx))
      .map(([t, text]) => post('BOM + JSON', t, [JSON_TYPE], `\ufeff${text}`)),
    fc
      .tuple(notOwner(fx), wrongQuantity)
      .map(([t, q]) =>
        post(
          'duplicate keys, the last one wrong',
          t,
          [JSON_TYPE],
          `{"productId":${fx.openProductId},"quantity":1,"quantity":${json(q)}}`,
          [400],
        ),
      ),
    fc.constant(
      post(
        'duplicate keys, the last one a closed product',
        fx.userTokens[0] ?? fx.adminToken,
        [JSON_TYPE],
        `{"productId":${fx.openProductId},"productId":${fx.closedProductId},"quantity":1}`,
        [409],
      ),
    ),
    fc
      .tuple(notOwner(fx), invalidUtf8, fc.constantFrom('value', 'key', 'number'))
      .map(([t, bytes, where]) => {
        const body =
          where === 'value'
            ? concat('{"productId":"', bytes, '","quantity":1}')
            : where === 'key'
              ? concat(`{"productId":${fx.openProductId},"quantity":1,"`, bytes, '":1}')
              : concat(`{"productId":${fx.openProductId}`, bytes, ',"quantity":1}');
        return post(`invalid UTF-8 in a ${where}`, t, [JSON_TYPE], body, [400]);
      }),
    fc
      .tuple(notOwner(fx), fc.uint8Array({ minLength: 1, maxLength: 256 }))
      .map(([t, bytes]) => post('random bytes as JSON', t, [JSON_TYPE], bytes, [400])),
    fc
      .tuple(
        notOwner(fx),
        fc.constantFrom('gzip', 'deflate', 'br', 'GZIP'),
        fc.uint8Array({ minLength: 1, maxLength: 64 }),
      )
      .map(([t, encoding, bytes]) =>
        post(
          `content-encoding ${encoding} over garbage`,
          t,
          [JSON_TYPE, ['content-encoding', encoding]],
          bytes,
        ),
      ),
    fc
      .tuple(notOwner(fx), fc.constantFrom('gzip', 'deflate', 'br'), rejectedOrderText(fx), fc.boolean())
      .map(([t, encoding, text, truncate]) => {
        const packed =
          encoding === 'gzip'
            ? gzipSync(text)
            : encoding === 'deflate'
              ? deflateSync(text)
              : brotliCompressSync(text);
        const bytes = truncate ? packed.subarray(0, Math.max(1, packed.length - 4)) : packed;
        return post(
          `content-encoding ${encoding}${truncate ? ', truncated' : ''}`,
          t,
          [JSON_TYPE, ['content-encoding', encoding]],
          bytes,
        );
      }),
    fc
      .tuple(
        notOwner(fx),
        fc.constantFrom('compress', 'x-gzip', 'zstd', 'gzip, gzip', 'identity', 'chunked'),
        rejectedOrderText(fx),
      )
      .map(([t, encoding, text]) =>
        post(`content-encoding ${encoding}`, t, [JSON_TYPE, ['content-encoding', encoding]], text),
      ),
    fc
      .tuple(notOwner(fx), rejectedOrderText(fx), fc.boolean())
      .map(([t, text, jsonFirst]) =>
        post(
          'duplicate content-type headers',
          t,
          jsonFirst
            ? [JSON_TYPE, ['content-type', 'text/plain']]
            : [['content-type', 'text/plain'], JSON_TYPE],
          text,
        ),
      ),
    fc
      .tuple(notOwner(fx), rejectedOrderText(fx))
      .map(([t, text]) =>
        post(
          'duplicate content-encoding headers',
          t,
          [JSON_TYPE, ['content-encoding', 'identity'], ['content-encoding', 'gzip']],
          text,
        ),
      ),
  );
};

// ---------------------------------------------------------------------------------------------- prototype

const PROTO_VALUES = [
  '{"admin":true}',
  '{"role":"admin","userId":"root"}',
  '{"prototype":{"polluted":1}}',
  '{"productId":1,"quantity":1}',
  'null',
  '1',
  '"x"',
  '[]',
];

const prototypeArb = (fx: FuzzFixture): fc.Arbitrary<FuzzRequest> => {
  const r = make('prototype');
  const key = fc.constantFrom('__proto__', 'constructor', 'prototype');
  const value = fc.constantFrom(...PROTO_VALUES);
  const p = fx.openProductId;
  const orderShapes = (k: string, v: string) => [
    `{"productId":${p},"quantity":1,"${k}":${v}}`,
    `{"${k}":${v}}`,
    `{"${k}":${v},"productId":${p},"quantity":1}`,
    `{"productId":{"${k}":${v}},"quantity":1}`,
    `{"productId":${p},"quantity":{"${k}":${v}}}`,
    `{"productId":${p},"quantity":1,"meta":{"a":{"${k}":${v}}}}`,
    `[{"${k}":${v}}]`,
    `{"constructor":{"prototype":{"${k}":${v}}},"productId":${p},"quantity":1}`,
  ];
  return fc.oneof(
    fc.tuple(anyUser(fx), key, value, fc.nat(7)).map(([t, k, v, i]) =>
      r({
        label: `${k} in an order`,
        method: 'POST',
        path: ROUTES.orders,
        headers: [bearer(t), JSON_TYPE],
        body: orderShapes(k, v)[i] ?? '',
        expect: [400],
      }),
    ),
    fc.tuple(key, value, fc.boolean()).map(([k, v, nested]) =>
      r({
        label: `${k} in a product listing`,
        method: 'POST',
        path: ROUTES.adminProducts,
        headers: [bearer(fx.adminToken), JSON_TYPE],
        body: nested ? `{"name":{"${k}":${v}},"stock":1}` : `{"name":"Fuzzed","stock":1,"${k}":${v}}`,
        expect: [400],
      }),
    ),
    fc.tuple(key, value).map(([k, v]) =>
      r({
        label: `${k} in a restock`,
        method: 'POST',
        path: ROUTES.restock(String(fx.openProductId)),
        headers: [bearer(fx.adminToken), JSON_TYPE],
        body: `{"quantity":5,"${k}":${v}}`,
        expect: [400],
      }),
    ),
    fc.tuple(notOwner(fx), key).map(([t, k]) =>
      r({
        label: `${k} in the query`,
        method: 'GET',
        path: `${ROUTES.order(fx.ownerOrderId)}?${k}[userId]=owner&${k}[role]=admin`,
        headers: [bearer(t)],
        expect: [404],
      }),
    ),
  );
};

// ---------------------------------------------------------------------------------------------- tokens

type Call = Readonly<{ method: string; path: string; body?: string; admin: boolean }>;

/** Every authenticated call, with a body that would succeed for the right token. */
const protectedCalls = (fx: FuzzFixture): readonly Call[] => [
  { method: 'POST', path: ROUTES.orders, body: validOrder(fx), admin: false },
  { method: 'GET', path: ROUTES.order(fx.ownerOrderId), admin: false },
  { method: 'GET', path: `${ROUTES.myOrders}?productId=${fx.openProductId}`, admin: false },
  { method: 'POST', path: ROUTES.payment(fx.ownerOrderId), admin: false },
  { method: 'POST', path: ROUTES.cancel(fx.ownerOrderId), admin: false },
  { method: 'POST', path: ROUTES.adminProducts, body: json({ name: 'Fuzzed', stock: 5 }), admin: true },
  {
    method: 'POST',
    path: ROUTES.restock(String(fx.openProductId)),
    body: json({ quantity: 5 }),
    admin: true,
  },
  { method: 'POST', path: ROUTES.reconciliations, admin: true },
  { method: 'GET', path: ROUTES.audit, admin: true },
];

const b64url = (s: string): string => Buffer.from(s).toString('base64url');

const garbageAuthorization = fc.oneof(
  fc.constantFrom(
    '',
    'Bearer',
    'Bearer ',
    'Bearer  ',
    'Basic Ym9iOnB3',
    'Digest x',
    'Token abc',
    'Bearer a.b.c',
    'Bearer ...',
    'Bearer null',
    'Bearer ÿÿÿ',
    'Bearer\tabc',
  ),
  fc.string({ maxLength: 200 }),
  fc.stringMatching(/^[A-Za-z0-9_.-]{1,300}$/).map((s) => `Bearer ${s}`),
  fc
    .tuple(fc.jsonValue({ maxDepth: 2 }), fc.jsonValue({ maxDepth: 2 }), fc.base64String({ maxLength: 60 }))
    .map(([h, p, s]) => `Bearer ${b64url(json(h))}.${b64url(json(p))}.${s.replace(/[+/=]/g, '')}`),
  fc
    .integer({ min: 1_000, max: 5_000 })
    .map((n) => `Bearer ${'A'.repeat(n)}.${'B'.repeat(n)}.${'C'.repeat(40)}`),
);

const tokensArb = (fx: FuzzFixture): fc.Arbitrary<FuzzRequest> => {
  const r = make('tokens');
  const calls = protectedCalls(fx);
  const adminCalls = calls.filter((c) => c.admin);
  const send = (label: string, call: Call, auth: readonly Header[], expect?: readonly number[]) =>
    r({
      label,
      method: call.method,
      path: call.path,
      headers: [...auth, ...(call.body === undefined ? [] : [JSON_TYPE])],
      ...(call.body === undefined ? {} : { body: call.body }),
      ...(expect ? { expect } : {}),
    });
  const [firstUser = fx.adminToken] = fx.userTokens;
  return fc.oneof(
    fc.constantFrom(...calls).map((call) => send('no token', call, [], [401])),
    fc
      .tuple(fc.constantFrom(...calls), fc.constantFrom(...fx.badTokens))
      .map(([call, [label, token]]) => send(`token: ${label}`, call, [bearer(token)], [401])),
    fc
      .tuple(fc.constantFrom(...calls), garbageAuthorization)
      .map(([call, value]) => send('garbage authorization', call, [['authorization', value]], [401])),
    fc
      .tuple(fc.constantFrom(...adminCalls), fc.constantFrom(fx.ownerToken, ...fx.userTokens))
      .map(([call, token]) => send('a user token on an admin route', call, [bearer(token)], [403])),
    // a valid user token in a malformed header: only on calls a valid token would not make succeed either
    fc
      .tuple(
        fc.constantFrom(
          ...[calls[1], calls[2], calls[3], ...adminCalls].filter((c): c is Call => c !== undefined),
        ),
        fc.constantFrom(
          (t: string): Header[] => [['authorization', `Bearer  ${t}`]],
          (t: string): Header[] => [['authorization', `Bearer ${t} extra`]],
          (t: string): Header[] => [['authorization', t]],
          (t: string): Header[] => [['authorization', `Bearer ${t}, Bearer ${t}`]],
          (t: string): Header[] => [['authorization', 'Bearer forged'], bearer(t)],
          (t: string): Header[] => [['x-authorization', `Bearer ${t}`]],
        ),
      )
      .map(([call, header]) => send('a valid token in a malformed header', call, header(firstUser))),
  );
};

/** Every bad token of the fixture on every authenticated call, each of which must be a 401: no sampling. */
export const everyBadToken = (fx: FuzzFixture): FuzzRequest[] => {
  const r = make('tokens');
  return protectedCalls(fx).flatMap((call) =>
    fx.badTokens.map(([label, token]) =>
      r({
        label: `token: ${label}`,
        method: call.method,
        path: call.path,
        headers: [bearer(token), ...(call.body === undefined ? [] : [JSON_TYPE])],
        ...(call.body === undefined ? {} : { body: call.body }),
        expect: [401],
      }),
    ),
  );
};

// ---------------------------------------------------------------------------------------------- ids

const MALFORMED_IDS = [
  '..',
  '.',
  '..%2F..%2Fadmin%2Faudit',
  '%2e%2e',
  '%2e%2e%2f%2e%2e%2fhealthz',
  '....%2F%2F',
  '%00',
  '00000000-0000-4000-8000-000000000000%00',
  'null',
  'undefined',
  '0',
  '-1',
  '%ZZ',
  '%C0%AF',
  '%E0%A4%A',
  '%',
  '%%',
  '%u0041',
  '*',
  '%2A',
  '$%7Bid%7D',
  '%7B%7D',
  '%5B%5D',
  '__proto__',
  'constructor',
  '%F0%9F%98%80',
  '%EF%BF%BD',
];

const malformedOrderId = fc
  .oneof(
    fc.constantFrom(...MALFORMED_IDS),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).map(encodeURIComponent),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 20 }).map(encodeURIComponent),
    fc.uuid().map((u) => `${u}x`),
    fc.uuid().map((u) => u.replaceAll('-', '')),
    fc.uuid().map((u) => `%7B${u}%7D`),
    fc.uuid().map((u) => `urn:uuid:${u}`),
  )
  .filter((id) => !decodesToUuid(id));

const MALFORMED_PRODUCT_IDS = [
  '0',
  '-1',
  '01',
  '1.0',
  '1e3',
  '%201',
  '0x1',
  '+1',
  '2147483648',
  '99999999999',
  'abc',
  '%00',
  '1%00',
  '1;drop',
  '..',
  '%ZZ',
  '%E0%A4%A',
  '%EF%BC%91',
  'NaN',
  'Infinity',
  '__proto__',
];

const badProductId = fc
  .oneof(
    fc.constantFrom(...MALFORMED_PRODUCT_IDS),
    fc.integer({ min: UNKNOWN_PRODUCT_FROM, max: MAX_ID }).map(String),
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }).map(encodeURIComponent),
  )
  .filter((id) => !couldBeListedProduct(id));

const ownerIdVariants = (id: string): readonly string[] => [
  id,
  id.toUpperCase(),
  `${id}%00`,
  `${id}%20`,
  `%20${id}`,
  `${id}/`,
  `${id}.json`,
  `${id};x=1`,
  [...id].map((c) => `%${c.charCodeAt(0).toString(16)}`).join(''),
];

const idsArb = (fx: FuzzFixture): fc.Arbitrary<FuzzRequest> => {
  const r = make('ids');
  const orderRoutes = [
    (id: string) => ['GET', ROUTES.order(id)] as const,
    (id: string) => ['POST', ROUTES.payment(id)] as const,
    (id: string) => ['POST', ROUTES.cancel(id)] as const,
  ];
  const route = fc.constantFrom(...orderRoutes);
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .tuple(notOwner(fx), route, fc.constantFrom(...ownerIdVariants(fx.ownerOrderId)), maybeQuery)
        .map(([t, at, id, q]) => {
          const [method, path] = at(id);
          const exact = id === fx.ownerOrderId || id === fx.ownerOrderId.toUpperCase();
          return r({
            label: exact ? "another user's order" : "another user's order, id mangled",
            method,
            path: `${path}${q}`,
            headers: [bearer(t)],
            ...(exact ? { expect: [404] } : {}),
          });
        }),
    },
    {
      weight: 3,
      arbitrary: fc.tuple(anyUser(fx), route, malformedOrderId, maybeQuery).map(([t, at, id, q]) => {
        const [method, path] = at(id);
        return r({
          label: 'malformed order id',
          method,
          path: `${path}${q}`,
          headers: [bearer(t)],
          expect: [400, 404],
        });
      }),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          anyUser(fx),
          route,
          fc.uuid().filter((u) => u.toLowerCase() !== fx.ownerOrderId.toLowerCase()),
        )
        .map(([t, at, id]) => {
          const [method, path] = at(id);
          return r({ label: 'a guessed order id', method, path, headers: [bearer(t)], expect: [404] });
        }),
    },
    {
      weight: 1,
      arbitrary: fc
        .constantFrom(
          `/api/v1/orders/../../healthz`,
          `/api/v1/orders/../admin/audit`,
          `/api/v1/orders/./${fx.ownerOrderId}/../${fx.ownerOrderId}`,
          `/api/v1/orders//payment`,
        )
        .chain((path) =>
          notOwner(fx).map((t) =>
            r({ label: 'path traversal', method: 'GET', path, headers: [bearer(t)], expect: [400, 404] }),
          ),
        ),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(
          fc.constantFrom(
            (id: string) => `productId=${id}`,
            (id: string) => `productId=${id}&limit=5`,
            (id: string) => `limit=${id}`,
            (id: string) => `cursor=${id}`,
            (id: string) => `productId=1&userId=${id}`,
          ),
          fc.constantFrom(...MALFORMED_PRODUCT_IDS.filter((id) => id !== '2147483648')),
        )
        .map(([query, id]) =>
          r({
            label: 'my orders with a malformed query',
            method: 'GET',
            path: `${ROUTES.myOrders}?${query(id)}`,
            headers: [bearer(fx.ownerToken)],
            expect: [400],
          }),
        ),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(badProductId, maybeQuery).map(([id, q]) =>
        r({
          label: 'malformed product id',
          method: 'GET',
          path: `${ROUTES.product(id)}${q}`,
          expect: [400, 404],
        }),
      ),
    },
    {
      weight: 1,
      arbitrary: badProductId.map((id) =>
        r({
          label: 'restock of a malformed product id',
          method: 'POST',
          path: ROUTES.restock(id),
          headers: [bearer(fx.adminToken), JSON_TYPE],
          body: json({ quantity: 5 }),
          expect: [400, 404],
        }),
      ),
    },
  );
};

// ---------------------------------------------------------------------------------------------- routes

const KNOWN_TEMPLATES = (fx: FuzzFixture): ReadonlyArray<readonly [allowed: string, path: string]> => [
  ['GET', '/healthz'],
  ['GET', '/readyz'],
  ['GET', '/metrics'],
  ['POST', ROUTES.orders],
  ['GET', ROUTES.order(fx.ownerOrderId)],
  ['GET', ROUTES.myOrders],
  ['POST', ROUTES.payment(fx.ownerOrderId)],
  ['POST', ROUTES.cancel(fx.ownerOrderId)],
  ['GET', ROUTES.product(String(fx.openProductId))],
  ['POST', ROUTES.salePath(String(fx.openProductId))],
  ['POST', ROUTES.adminProducts],
  ['POST', ROUTES.restock(String(fx.openProductId))],
  ['POST', ROUTES.reconciliations],
  ['GET', ROUTES.audit],
];

const PREFIXES = [
  '',
  '/api',
  '/api/v1',
  '/api/v2',
  '/api/v1/admin',
  '/api/v1/seckill',
  '/API/V1',
  '/api/v1/orders/x',
];

const segment = fc.oneof(
  fc.webSegment(),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }).map(encodeURIComponent),
  fc.constantFrom(
    '%ZZ',
    '%00',
    '..',
    '.',
    'healthz',
    'admin',
    'orders',
    'products',
    'stock',
    'payment',
    'cancel',
  ),
);

const routesArb = (fx: FuzzFixture): fc.Arbitrary<FuzzRequest> => {
  const r = make('routes');
  const auth = fc.oneof(
    fc.constant<Header[]>([]),
    fc.constantFrom(fx.ownerToken, fx.adminToken, ...fx.userTokens).map((t) => [bearer(t)]),
  );
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc
        .record({
          method: fc.constantFrom(...METHODS),
          prefix: fc.constantFrom(...PREFIXES),
          segments: fc.array(segment, { minLength: 1, maxLength: 5 }),
          query: maybeQuery,
          auth,
          withBody: fc.boolean(),
        })
        .map((g) => ({ ...g, path: `${g.prefix}/${g.segments.join('/')}` }))
        .filter((g) => !matchesKnownRoute(g.path))
        .map((g) =>
          r({
            label: 'unknown route',
            method: g.method,
            path: `${g.path}${g.query}`,
            headers: [...g.auth, ...(g.withBody ? [JSON_TYPE] : [])],
            ...(g.withBody ? { body: validOrder(fx) } : {}),
            expect: [404],
          }),
        ),
    },
    {
      weight: 3,
      arbitrary: fc
        .tuple(fc.constantFrom(...KNOWN_TEMPLATES(fx)), fc.constantFrom(...METHODS), maybeQuery, auth)
        .filter(([[allowed], method]) => allowed !== method)
        .map(([[, path], method, query, headers]) =>
          r({
            label: `${method} on a ${path.startsWith('/api') ? 'known API' : 'known ops'} route`,
            method,
            path: `${path}${query}`,
            headers: [...headers, JSON_TYPE],
            body: path === ROUTES.orders ? validOrder(fx) : json({ name: 'Fuzzed', stock: 5, quantity: 5 }),
            expect: [404],
          }),
        ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(notOwner(fx), oddQuery).map(([t, q]) =>
        r({
          label: 'odd query on an order of someone else',
          method: 'POST',
          path: `${ROUTES.cancel(fx.ownerOrderId)}${q}`,
          headers: [bearer(t)],
          expect: [404],
        }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(oddQuery, fc.constantFrom(...fx.badTokens)).map(([q, [tokenLabel, token]]) =>
        r({
          label: `odd query, token: ${tokenLabel}`,
          method: 'POST',
          path: `${ROUTES.orders}${q}`,
          headers: [bearer(token), JSON_TYPE],
          body: validOrder(fx),
          expect: [401],
        }),
      ),
    },
  );
};

// ---------------------------------------------------------------------------------------------- admin

const ISO_MISTAKES = [
  'tomorrow',
  '2030-01-01',
  '2030-01-01T00:00:00',
  '2030-13-01T00:00:00Z',
  '2030-02-30T00:00:00Z',
  '',
  '2030-01-01T00:00:00+25:00',
  '0000-00-00T00:00:00Z',
  '2030-01-01 00:00:00Z',
];

/** One change to a valid listing that makes it invalid. */
const listingMistake: fc.Arbitrary<Labelled<(b: Record<string, unknown>) => void>> = fc.oneof(
  fc.constantFrom<Labelled<(b: Record<string, unknown>) => void>>(
    ['name missing', (b) => delete b['name']],
    ['stock missing', (b) => delete b['stock']],
    ['blank name', (b) => (b['name'] = '   ')],
    ['empty name', (b) => (b['name'] = '')],
    ['name too long', (b) => (b['name'] = 'n'.repeat(201))],
  ),
  fc
    .jsonValue({ maxDepth: 2 })
    .filter((v) => typeof v !== 'string')
    .map((v) => ['name not a string', (b: Record<string, unknown>) => (b['name'] = v)] as const),
  wrongValue(0, 100_000_000).map(
    (v) => ['wrong stock', (b: Record<string, unknown>) => (b['stock'] = v)] as const,
  ),
  wrongQuantity.map(
    (v) => ['wrong perUserLimit', (b: Record<string, unknown>) => (b['perUserLimit'] = v)] as const,
  ),
  wrongQuantity.map(
    (v) => ['wrong maxPerOrder', (b: Record<string, unknown>) => (b['maxPerOrder'] = v)] as const,
  ),
  fc
    .integer({ min: 1, max: 100 })
    .chain((limit) =>
      fc
        .integer({ min: limit + 1, max: MAX_QUANTITY })
        .map(
          (max) =>
            [
              'maxPerOrder over perUserLimit',
              (b: Record<string, unknown>) => Object.assign(b, { perUserLimit: limit, maxPerOrder: max }),
            ] as const,
        ),
    ),
  fc
    .tuple(
      fc.constantFrom('saleStartsAt', 'saleEndsAt'),
      fc.oneof(fc.constantFrom<unknown>(...ISO_MISTAKES), fc.integer(), fc.constant(null)),
    )
    .map(([k, v]) => [`wrong ${k}`, (b: Record<string, unknown>) => (b[k] = v)] as const),
  fc.constant([
    'sale ends before it starts',
    (b: Record<string, unknown>) =>
      Object.assign(b, { saleStartsAt: '2030-01-02T00:00:00Z', saleEndsAt: '2030-01-01T00:00:00Z' }),
  ] as const),
  fc
    .tuple(
      fc.constantFrom('userId', 'role', 'productId', 'gate', 'version', 'stockLeft', 'id', 'createdBy'),
      fc.jsonValue({ maxDepth: 1 }),
    )
    .map(([k, v]) => [`extra field ${k}`, (b: Record<string, unknown>) => (b[k] = v)] as const),
);

const adminArb = (fx: FuzzFixture): fc.Arbitrary<FuzzRequest> => {
  const r = make('admin');
  const admin = bearer(fx.adminToken);
  const restock = ROUTES.restock(String(fx.openProductId));
  return fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(
          fc.record(
            {
              name: fc
                .string({ unit: 'grapheme', minLength: 1, maxLength: 30 })
                .filter((s) => s.trim().length > 0),
              stock: fc.integer({ min: 0, max: 1_000 }),
              perUserLimit: fc.integer({ min: 1, max: 5 }),
              saleStartsAt: fc.constant('2030-01-01T00:00:00Z'),
            },
            { requiredKeys: ['name', 'stock'] },
          ),
          listingMistake,
        )
        .map(([base, [label, mistake]]) => {
          const body: Record<string, unknown> = { ...base };
          mistake(body);
          return r({
            label: `listing: ${label}`,
            method: 'POST',
            path: ROUTES.adminProducts,
            headers: [admin, JSON_TYPE],
            body: json(body),
            expect: [400],
          });
        }),
    },
    {
      weight: 2,
      arbitrary: fc
        .oneof(
          wrongValue(1, 100_000_000).map((q) => ['wrong quantity', { quantity: q }] as const),
          fc.constant(['quantity missing', {}] as const),
          fc.jsonValue({ maxDepth: 1 }).map((v) => ['extra field', { quantity: 5, productId: v }] as const),
          fc
            .jsonValue({ maxDepth: 2 })
            .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
            .map((v) => ['body not an object', v] as const),
        )
        .map(([label, body]) =>
          r({
            label: `restock: ${label}`,
            method: 'POST',
            path: restock,
            headers: [admin, JSON_TYPE],
            body: json(body),
            expect: [400],
          }),
        ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(ROUTES.adminProducts, restock), fc.constantFrom(...NOT_JSON))
        .map(([path, type]) =>
          r({
            label: `admin body as ${JSON.stringify(type)}`,
            method: 'POST',
            path,
            headers: [admin, ...(type === null ? [] : [['content-type', type] as const])],
            body: json(path === restock ? { quantity: 5 } : { name: 'Fuzzed', stock: 5 }),
            expect: [415],
          }),
        ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom(ROUTES.adminProducts, restock),
          fc.integer({ min: BODY_LIMIT + 1, max: 40_000 }),
        )
        .map(([path, n]) =>
          r({
            label: 'admin body over 16 KiB',
            method: 'POST',
            path,
            headers: [admin, JSON_TYPE],
            body: json(
              path === restock ? { quantity: 5, pad: 'p'.repeat(n) } : { name: 'n'.repeat(n), stock: 5 },
            ),
            expect: [413],
          }),
        ),
    },
  );
};

// ---------------------------------------------------------------------------------------------- all

/** The whole mix, roughly even across categories. */
export const hostileRequest = (fx: FuzzFixture): fc.Arbitrary<FuzzRequest> =>
  fc.oneof(
    { weight: 3, arbitrary: typesArb(fx) },
    { weight: 2, arbitrary: sizesArb(fx) },
    { weight: 3, arbitrary: encodingsArb(fx) },
    { weight: 2, arbitrary: prototypeArb(fx) },
    { weight: 3, arbitrary: tokensArb(fx) },
    { weight: 3, arbitrary: idsArb(fx) },
    { weight: 2, arbitrary: routesArb(fx) },
    { weight: 2, arbitrary: adminArb(fx) },
  );

// ---------------------------------------------------------------------------------------------- tokens

const now = (): number => Math.floor(Date.now() / 1000);

/** An HMAC-signed JWT with any header and claims (node:crypto, so jose cannot refuse to make it). */
const craft = (
  header: object,
  claims: object,
  secret: string,
  hash: 'sha256' | 'sha384' | 'sha512' = 'sha256',
): string => {
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  return `${input}.${createHmac(hash, secret).update(input).digest('base64url')}`;
};

const ODD_SUBJECTS = [
  'a/b',
  '../admin',
  'bob\u0000',
  'ünï',
  ' bob',
  'bob ',
  'x'.repeat(65),
  'a b',
  '<script>',
  'bob;role=admin',
  '%00',
  '*',
];
const ODD_ROLES: unknown[] = [
  'root',
  'ADMIN',
  'Admin',
  '',
  'user ',
  'superuser',
  null,
  true,
  ['admin'],
  { admin: true },
];

/** 1 January 33,000, in seconds */
const YEAR_33000 = 979_212_240_000;

/**
 * Tokens the service must refuse: expired, forged, unsigned, another algorithm, bad claims, tampered, living
 * too long, issued in the future, of another issuer or audience. Apart from what their label says, each
 * carries what the service's token policy asks for (its iss and aud), so that it is refused for that reason.
 */
export const buildBadTokens = async (
  secret: string,
  policy: Readonly<{ issuer: string | null; audience: string | null; maxTtlSeconds: number }>,
): Promise<Array<[string, string]>> => {
  const key = new TextEncoder().encode(secret);
  const otherKey = new TextEncoder().encode('another-secret-that-is-at-least-32-characters-long');
  const exp = now() + 3600;
  const issued = {
    ...(policy.issuer ? { iss: policy.issuer } : {}),
    ...(policy.audience ? { aud: policy.audience } : {}),
  };
  const claims = (extra: Record<string, unknown> = {}) => ({
    sub: 'bob',
    role: 'user',
    exp,
    ...issued,
    ...extra,
  });
  const hs256 = { alg: 'HS256', typ: 'JWT' };
  const signed = (sub: string, role: string) =>
    new SignJWT({ role, ...issued }).setProtectedHeader({ alg: 'HS256' }).setSubject(sub).setIssuedAt();
  const valid = craft(hs256, claims(), secret);
  const [h = '', p = '', s = ''] = valid.split('.');
  return [
    [
      'expired',
      await signed('bob', 'user')
        .setIssuedAt(now() - 7200)
        .setExpirationTime(now() - 3600)
        .sign(key),
    ],
    [
      'expired admin',
      await signed('root', 'admin')
        .setIssuedAt(now() - 7200)
        .setExpirationTime(now() - 1)
        .sign(key),
    ],
    ['signed with another secret', await signed('bob', 'user').setExpirationTime('1h').sign(otherKey)],
    [
      'admin signed with another secret',
      await signed('root', 'admin').setExpirationTime('1h').sign(otherKey),
    ],
    [
      'the owner, signed with another secret',
      await signed('owner', 'user').setExpirationTime('1h').sign(otherKey),
    ],
    [
      'alg none',
      new UnsecuredJWT({ role: 'admin', ...issued }).setSubject('root').setExpirationTime('1h').encode(),
    ],
    ['exp in year 33,000', craft(hs256, claims({ iat: now(), exp: YEAR_33000 }), secret)],
    ['exp in year 33,000, no iat', craft(hs256, claims({ exp: YEAR_33000 }), secret)],
    [
      'an admin whose exp is in year 33,000',
      craft(hs256, claims({ sub: 'root', role: 'admin', exp: YEAR_33000 }), secret),
    ],
    [
      'lives a second longer than the maximum',
      craft(hs256, claims({ iat: now(), exp: now() + policy.maxTtlSeconds + 1 }), secret),
    ],
    ['issued in an hour', craft(hs256, claims({ iat: now() + 3600, exp: now() + 4200 }), secret)],
    ['iat a string', craft(hs256, claims({ iat: String(now()) }), secret)],
    ['another issuer', craft(hs256, claims({ iss: 'https://evil.example' }), secret)],
    ['no issuer', craft(hs256, claims({ iss: undefined }), secret)],
    ['another audience', craft(hs256, claims({ aud: 'another-service' }), secret)],
    ['no audience', craft(hs256, claims({ aud: undefined }), secret)],
    ['alg none with a signature', craft({ alg: 'none', typ: 'JWT' }, claims({ role: 'admin' }), secret)],
    ['alg None', craft({ alg: 'None' }, claims(), secret)],
    ['HS512 with the right secret', craft({ alg: 'HS512' }, claims(), secret, 'sha512')],
    ['HS384 with the right secret', craft({ alg: 'HS384' }, claims(), secret, 'sha384')],
    ['RS256 header over an HMAC', craft({ alg: 'RS256' }, claims(), secret)],
    ['no sub', craft(hs256, { role: 'user', exp }, secret)],
    ['empty sub', craft(hs256, claims({ sub: '' }), secret)],
    ...ODD_SUBJECTS.map((sub): [string, string] => [
      `sub ${JSON.stringify(sub)}`,
      craft(hs256, claims({ sub }), secret),
    ]),
    ['sub a number', craft(hs256, claims({ sub: 123 }), secret)],
    ['sub an array', craft(hs256, claims({ sub: ['bob'] }), secret)],
    ['sub an object', craft(hs256, claims({ sub: { id: 'bob' } }), secret)],
    ['no role', craft(hs256, { sub: 'bob', exp }, secret)],
    ...ODD_ROLES.map((role): [string, string] => [
      `role ${JSON.stringify(role)}`,
      craft(hs256, claims({ role }), secret),
    ]),
    ['no exp', craft(hs256, { sub: 'bob', role: 'user' }, secret)],
    ['exp a string', craft(hs256, claims({ exp: String(exp) }), secret)],
    ['not valid before next hour', craft(hs256, claims({ nbf: exp }), secret)],
    [
      'payload swapped for an admin one',
      `${h}.${b64url(JSON.stringify(claims({ sub: 'root', role: 'admin' })))}.${s}`,
    ],
    ['signature truncated', valid.slice(0, -6)],
    ['signature empty', `${h}.${p}.`],
    [
      'signature of another token',
      `${h}.${p}.${craft(hs256, claims({ sub: 'eve' }), secret).split('.')[2] ?? ''}`,
    ],
    ['unknown crit header', craft({ alg: 'HS256', crit: ['exp'] }, claims(), secret)],
    ['two parts', `${h}.${p}`],
    ['five parts', `${h}.${p}.${s}.${s}.${s}`],
    [
      'payload not JSON',
      (() => {
        const input = `${b64url(JSON.stringify(hs256))}.${b64url('not json')}`;
        return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
      })(),
    ],
  ];
};
