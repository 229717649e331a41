// The API's OpenAPI document, one operation after another: it is as long as the API is wide.
/*
 * Over 250 lines on purpose: this is the API's one table of paths, read top to bottom as the document it
 * becomes. Each path is a few lines of data; split by route, the document would be scattered across files.
 * The answer schemas live in openapi-answers.ts.
 */
import { z } from 'zod';
import { createDocument, type ZodOpenApiOperationObject, type ZodOpenApiPathsObject } from 'zod-openapi';
import {
  AuditReport,
  BuyerOrders,
  Order,
  OrderAccepted,
  Problem,
  Product,
  ProductRecord,
  Readiness,
  ReconciliationReport,
  SalePathGrant,
  SaleFigures,
} from './openapi-answers.js';
import { rejectionsAnsweredWith } from './order-rejections.js';
import {
  IDEMPOTENCY_KEY,
  ListProductBody,
  MyOrdersQuery,
  OrderIdParam,
  PlaceOrderBody,
  ProductIdParam,
  RestockBody,
} from './schemas.js';

/**
 * The OpenAPI 3.1 document of the HTTP API, built from the zod schemas that validate the requests (request
 * bodies and path parameters are the very objects the routes parse with); the answers are described in
 * openapi-answers.ts.
 */

const json = (schema: z.ZodType) => ({ 'application/json': { schema } });
const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: Problem } },
});
const ok = (description: string, schema: z.ZodType) => ({ description, content: json(schema) });

const unauthorized = problem('missing, malformed or expired bearer token');
const forbidden = problem('the token is not an admin token');
const unavailable = problem('a dependency is down; retry shortly');
const badRequest = problem('a field is missing or invalid (each one named)');
const retryAfter = {
  'Retry-After': {
    description: 'seconds until the budget has room again',
    schema: { type: 'integer' as const },
  },
};
/** A spent budget: RATE_LIMITED with Retry-After (docs/operations.md, Admission control). */
const limited = (description: string) => ({ ...problem(description), headers: retryAfter });

const orderPath = z.object({ orderId: OrderIdParam.meta({ description: 'the order id (UUID)' }) });
const productPath = z.object({ productId: ProductIdParam.meta({ description: 'the product id' }) });

const user: ZodOpenApiOperationObject['security'] = [{ bearer: [] }];

const idempotencyKey = z.object({
  'Idempotency-Key': z
    .string()
    .regex(IDEMPOTENCY_KEY)
    .optional()
    .meta({
      description:
        'A key the client chooses per order request (a UUID, say), kept SECKILL_IDEMPOTENCY_KEY_TTL_MS (24 h). The ' +
        'same buyer sending it again, with the same body, gets the same answer: the same orderId (202, with ' +
        "`Idempotent-Replayed: true` and the order's status now) or the same SOLD_OUT / LIMIT_EXCEEDED, and never " +
        'takes a second unit, also when the first answer was lost in a crash. A repeat sent while the first is ' +
        "under way waits for it. A key belongs to the buyer and the product: another buyer's, or the same on another product, is a request of its own. The same key with another quantity: 422.",
    }),
});
const replayed = {
  'Idempotent-Replayed': {
    description: 'true when the answer is a repeat answered from the Idempotency-Key',
    schema: { type: 'string' as const, enum: ['true'] },
  },
};

const paths: ZodOpenApiPathsObject = {
  '/api/v1/seckill/orders': {
    post: {
      operationId: 'placeOrder',
      summary: 'Reserve units of a product in the flash sale',
      description:
        'Send an `Idempotency-Key` to retry safely: after a timeout or a broken connection, the same request with ' +
        'the same key is answered with the order it made, if it made one. A buyer whose answer never arrived also ' +
        'finds the order with GET /api/v1/orders?productId=….',
      security: user,
      requestParams: { header: idempotencyKey },
      requestBody: { required: true, content: json(PlaceOrderBody) },
      responses: {
        '202': {
          ...ok('reserved; MySQL decides it shortly (poll the order)', OrderAccepted),
          headers: {
            Location: { description: 'the order', schema: { type: 'string' as const } },
            ...replayed,
          },
        },
        '400': badRequest,
        '401': unauthorized,
        '404': problem(rejectionsAnsweredWith(404)),
        '403': problem(rejectionsAnsweredWith(403)),
        '409': problem(rejectionsAnsweredWith(409)),
        '413': problem('the body is larger than 16 KiB'),
        '415': problem('the body is not application/json'),
        '422': problem(rejectionsAnsweredWith(422)),
        '429': limited(rejectionsAnsweredWith(429)),
        '503': unavailable,
      },
    },
  },
  '/api/v1/seckill/products/{productId}/path': {
    post: {
      operationId: 'salePath',
      summary: "The buyer's sale path token for a product, once its sale window is open",
      description:
        'A short-lived (SECKILL_PATH_TOKEN_TTL_MS), single-use token bound to the buyer and the product. A product ' +
        'listed with `requirePathToken: true` takes an order only with one: `{productId, quantity, pathToken}`.',
      security: user,
      requestParams: { path: productPath },
      responses: {
        '200': ok('the token', SalePathGrant),
        '400': badRequest,
        '401': unauthorized,
        '404': problem('PRODUCT_NOT_FOUND'),
        '409': problem('SALE_NOT_ACTIVE: the window has not opened, or has closed'),
        '429': limited("RATE_LIMITED: the buyer's or the client address's budget is spent"),
        '503': unavailable,
      },
    },
  },
  '/api/v1/orders': {
    get: {
      operationId: 'myOrders',
      summary: "The caller's own orders, newest first, a page at a time",
      description:
        "How a buyer finds an order whose answer never arrived. `productId` keeps one product's orders; " +
        '`limit` (1–100, default 20) sizes a page; `cursor` is the `next` of the page before.',
      security: user,
      requestParams: { query: MyOrdersQuery },
      responses: {
        '200': ok("the caller's orders", BuyerOrders),
        '400': badRequest,
        '401': unauthorized,
        '429': limited("RATE_LIMITED: the buyer's read budget is spent"),
        '503': unavailable,
      },
    },
  },
  '/api/v1/orders/{orderId}': {
    get: {
      operationId: 'getOrder',
      summary: "One of the caller's orders",
      security: user,
      requestParams: { path: orderPath },
      responses: {
        '200': ok('the order', Order),
        '400': badRequest,
        '401': unauthorized,
        '404': problem('ORDER_NOT_FOUND (also for orders of other users)'),
        '429': limited("RATE_LIMITED: the buyer's read budget is spent"),
      },
    },
  },
  '/api/v1/orders/{orderId}/stream-ticket': {
    post: {
      operationId: 'orderStreamTicket',
      summary: "A URL that opens the order's event stream without an Authorization header (for EventSource)",
      description:
        "A browser's `EventSource` cannot send a bearer token: this answers the stream's URL with a ticket in it, " +
        'bound to the caller and the order, good for one stream within SECKILL_ORDER_EVENTS_TICKET_TTL_MS (60 s).',
      security: user,
      requestParams: { path: orderPath },
      responses: {
        '201': ok(
          'the URL to open, relative to this service',
          z.object({
            url: z.string().meta({ example: '/api/v1/orders/6a1c…/events?ticket=Qm9vdHN0cmFwcGVkVGlja2V0' }),
            expiresAt: z.string().meta({ format: 'date-time' }),
          }),
        ),
        '400': badRequest,
        '401': unauthorized,
        '404': problem('ORDER_NOT_FOUND (also for orders of other users)'),
        '429': limited("RATE_LIMITED: the buyer's read budget is spent"),
        '503': unavailable,
      },
    },
  },
  '/api/v1/orders/{orderId}/events': {
    get: {
      operationId: 'watchOrder',
      summary: "Watch one of the caller's orders decide (server-sent events)",
      description:
        'A `text/event-stream`: an `event: status` with the order as it stands, then one per status change, ' +
        'until the order is PAID or RELEASED, SECKILL_ORDER_EVENTS_GRACE_MS after it is COMMITTED, or once the ' +
        "stream has lasted SECKILL_ORDER_EVENTS_MAX_MS. Each event's data is the order, as GET " +
        '/api/v1/orders/{orderId} answers it. The caller is the bearer token, or, without an Authorization ' +
        'header, the `ticket` of POST /api/v1/orders/{orderId}/stream-ticket. A buyer holds at most ' +
        'SECKILL_ORDER_EVENTS_PER_BUYER (3) streams open at once in a process.',
      security: [{ bearer: [] }, {}],
      requestParams: {
        path: orderPath,
        query: z.object({
          ticket: z
            .string()
            .optional()
            .meta({ description: 'a stream ticket, used once, instead of the Authorization header' }),
        }),
      },
      responses: {
        '200': {
          description: 'the stream of status events',
          content: { 'text/event-stream': { schema: Order } },
        },
        '400': badRequest,
        '401': problem('missing, malformed or expired bearer token; INVALID_TICKET'),
        '404': problem('ORDER_NOT_FOUND (also for orders of other users)'),
        '429': limited(
          "RATE_LIMITED: the buyer's read budget is spent, the buyer holds as many streams as allowed, or this server follows as many as it can",
        ),
      },
    },
  },
  '/api/v1/orders/{orderId}/payment': {
    post: {
      operationId: 'payOrder',
      summary: 'Pay a committed order',
      security: user,
      requestParams: { path: orderPath },
      responses: {
        '200': ok('paid', Order),
        '400': badRequest,
        '401': unauthorized,
        '404': problem('ORDER_NOT_FOUND'),
        '409': problem('ORDER_NOT_COMMITTED or ORDER_ALREADY_PAID'),
        '429': limited("RATE_LIMITED: the buyer's budget of payments and cancellations is spent"),
        '503': unavailable,
      },
    },
  },
  '/api/v1/orders/{orderId}/cancel': {
    post: {
      operationId: 'cancelOrder',
      summary: 'Cancel an unpaid order; its units go back on sale',
      security: user,
      requestParams: { path: orderPath },
      responses: {
        '200': ok('released', Order),
        '400': badRequest,
        '401': unauthorized,
        '404': problem('ORDER_NOT_FOUND'),
        '409': problem('ORDER_ALREADY_PAID or ORDER_STATE_CONFLICT'),
        '429': limited("RATE_LIMITED: the buyer's budget of payments and cancellations is spent"),
        '503': unavailable,
      },
    },
  },
  '/api/v1/products/{productId}': {
    get: {
      operationId: 'getProduct',
      summary: 'Stock left as buyers meet it, and the sale window',
      requestParams: { path: productPath },
      responses: {
        '200': ok('the product', Product),
        '400': badRequest,
        '404': problem('PRODUCT_NOT_FOUND'),
        '429': limited(
          'RATE_LIMITED: the read budget of the caller (or its address, without a token) is spent',
        ),
      },
    },
  },
  '/api/v1/admin/products': {
    post: {
      operationId: 'listProduct',
      summary: 'List a product and warm its gate',
      security: user,
      requestBody: { required: true, content: json(ListProductBody) },
      responses: {
        '201': ok('listed', ProductRecord),
        '400': badRequest,
        '401': unauthorized,
        '403': forbidden,
        '503': unavailable,
      },
    },
  },
  '/api/v1/admin/products/{productId}/stock': {
    post: {
      operationId: 'restockProduct',
      summary: 'Add stock to a product (MySQL and the gate)',
      security: user,
      requestParams: { path: productPath },
      requestBody: { required: true, content: json(RestockBody) },
      responses: {
        '200': ok('restocked', ProductRecord),
        '400': badRequest,
        '401': unauthorized,
        '403': forbidden,
        '404': problem('PRODUCT_NOT_FOUND'),
        '503': unavailable,
      },
    },
  },
  '/api/v1/admin/reconciliations': {
    post: {
      operationId: 'reconcile',
      summary: 'Reconcile the gate with MySQL now',
      security: user,
      responses: {
        '200': ok('the reconciliation report', ReconciliationReport),
        '401': unauthorized,
        '403': forbidden,
        '503': unavailable,
      },
    },
  },
  '/api/v1/admin/audit': {
    get: {
      operationId: 'audit',
      summary: 'Replay the event store and check it against MySQL and the gate',
      security: user,
      responses: {
        '200': ok('the replay report', AuditReport),
        '401': unauthorized,
        '403': forbidden,
        '503': unavailable,
      },
    },
  },
  '/api/v1/admin/dashboard': {
    get: {
      operationId: 'saleFigures',
      summary: 'The live sale figures the /dashboard page shows',
      security: user,
      responses: {
        '200': ok('the figures, gathered now', SaleFigures),
        '401': unauthorized,
        '403': forbidden,
        '503': unavailable,
      },
    },
  },
  '/api/v1/openapi.json': {
    get: {
      operationId: 'openApi',
      summary: 'This document',
      responses: { '200': { description: 'OpenAPI 3.1', content: { 'application/json': {} } } },
    },
  },
  '/docs': {
    get: {
      operationId: 'apiDocs',
      summary: 'This document in Swagger UI',
      responses: { '200': { description: 'an HTML page', content: { 'text/html': {} } } },
    },
  },
  '/dashboard': {
    get: {
      operationId: 'dashboardPage',
      summary: 'The live sale dashboard (its data needs an admin token)',
      responses: { '200': { description: 'an HTML page', content: { 'text/html': {} } } },
    },
  },
  '/healthz': {
    get: {
      operationId: 'liveness',
      summary: 'The process answers',
      responses: { '200': ok('alive', z.object({ status: z.literal('ok') })) },
    },
  },
  '/readyz': {
    get: {
      operationId: 'readiness',
      summary: 'Every dependency answers',
      description:
        "Each check is `ok` or `failing`. An admin bearer token also gets `details`: the failing checks' error " +
        'messages (on the metrics port, SECKILL_METRICS_PORT on loopback, everyone gets them). Any other token ' +
        'is ignored: a probe never fails for it.',
      security: [{}, { bearer: [] }],
      responses: {
        '200': ok('ready', Readiness),
        '503': ok('not ready', Readiness),
      },
    },
  },
  '/api/v1/dev/login': {
    post: {
      operationId: 'devLogin',
      summary: "A buyer's token for the demo (development secret only)",
      description:
        "The buyer's page's demo sign-in. It exists only while tokens are signed with the public development " +
        'secret (SECKILL_JWT_SECRET unset), when the service listens on this machine alone; with a secret of its ' +
        "own the service answers 404 here, and buyers bring a token from the identity provider. A user's " +
        'token for an hour, never an admin token.',
      requestBody: {
        content: json(z.strictObject({ userId: z.string().meta({ example: 'alice' }) })),
      },
      responses: {
        '201': ok(
          "the buyer's token",
          z.object({
            userId: z.string(),
            token: z.string(),
            expiresAt: z.string().meta({ format: 'date-time' }),
          }),
        ),
        '400': badRequest,
        '404': problem('NOT_FOUND: this service signs with a secret of its own and has no demo sign-in'),
        '429': limited("RATE_LIMITED: the address's budget is spent"),
      },
    },
  },
  '/sale/{productId}': {
    get: {
      operationId: 'salePage',
      summary: "The buyer's page (HTML)",
      description:
        'A countdown to the sale window, a buy button that asks for the sale path token and places the order ' +
        "with an Idempotency-Key, and the order's fate followed live through its event stream (a stream " +
        'ticket), with pay and cancel. Static files: `sale/sale.js` and `sale/sale.css` beside it.',
      requestParams: { path: productPath },
      responses: {
        '200': { description: 'the page', content: { 'text/html': {} } },
        '404': problem('NOT_FOUND: not a product id'),
      },
    },
  },
  '/metrics': {
    get: {
      operationId: 'metrics',
      summary: 'Prometheus metrics',
      description:
        'On the API port, only with the SECKILL_METRICS_TOKEN credential: `Authorization: Bearer <token>`, or ' +
        'HTTP Basic with the token as the password. Without SECKILL_METRICS_TOKEN it is closed here (404). The ' +
        'metrics port (SECKILL_METRICS_PORT, on loopback by default) serves it without a credential.',
      security: [{ metricsBearer: [] }, { metricsBasic: [] }],
      responses: {
        '200': { description: 'text exposition format', content: { 'text/plain': {} } },
        '401': problem('MISSING_CREDENTIAL or INVALID_CREDENTIAL (with a WWW-Authenticate challenge)'),
        '404': problem(
          'METRICS_NOT_SERVED: SECKILL_METRICS_TOKEN is not set; scrape the metrics port instead',
        ),
      },
    },
  },
};

let built: ReturnType<typeof createDocument> | null = null;

/** Built once, on first use. */
export const openApiDocument = (version: string): ReturnType<typeof createDocument> => {
  built ??= createDocument({
    openapi: '3.1.0',
    info: {
      title: 'seckill',
      version,
      description:
        'Flash-sale order service. Errors are application/problem+json with a stable `code`. Tokens are HS256 JWTs (`sub` user id, `role` user or admin).',
    },
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        metricsBearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'SECKILL_METRICS_TOKEN, for GET /metrics on the API port',
        },
        metricsBasic: {
          type: 'http',
          scheme: 'basic',
          description:
            'any user name, SECKILL_METRICS_TOKEN as the password, for GET /metrics on the API port',
        },
      },
    },
    paths,
  });
  return built;
};
