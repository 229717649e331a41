import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import {
  type AuditHistory,
  type HealthCheck,
  type IdGenerator,
  InfrastructureUnavailable,
  type Logger,
  type ManageProducts,
  type OrderView,
  type PayOrder,
  type PlaceOrder,
  type Queries,
  type ReconcileStock,
  type ReleaseOrder,
  type SaleDashboard,
  VersionConflict,
} from '../../application/index.js';
import {
  DomainError,
  IllegalOrderTransition,
  InvalidOrderQuantity,
  InvalidProductTerms,
  OrderNotFound,
  ProductAlreadyListed,
  ProductNotListed,
} from '../../domain/index.js';
import { HttpProblem, type Problem, sendProblem } from './problem.js';
import { ListProductBody, OrderIdParam, PlaceOrderBody, ProductIdParam, RestockBody } from './schemas.js';
import type { JwtTokens, Principal } from './tokens.js';
import { AnswerRates } from './answer-rates.js';
import { mountOps } from './ops.js';
import { DASHBOARD_PAGE } from './dashboard-page.js';
import { openApiDocument } from './openapi.js';
import swaggerUi from 'swagger-ui-express';

export type HttpObserver = {
  request(method: string, route: string, status: number, seconds: number): void;
  orderAnswer(code: string): void;
  render(): Promise<{ contentType: string; body: string }>;
};

export type HttpDependencies = Readonly<{
  placeOrder: PlaceOrder;
  payOrder: PayOrder;
  releaseOrder: ReleaseOrder;
  manageProducts: ManageProducts;
  reconcile: ReconcileStock;
  audit: AuditHistory;
  queries: Queries;
  tokens: JwtTokens;
  health: readonly HealthCheck[];
  observer: HttpObserver;
  logger: Logger;
  ids: IdGenerator;
  dashboard: SaleDashboard;
  /** the service's version, shown in the OpenAPI document */
  version: string;
  /** names this process in the dashboard's rates (they are counted per process) */
  instance: string;
}>;

type Locals = { correlationId: string; principal?: Principal };

const REJECTION_STATUS = {
  SOLD_OUT: 409,
  LIMIT_EXCEEDED: 409,
  SALE_NOT_ACTIVE: 409,
  DUPLICATE_REQUEST: 429,
  RATE_LIMITED: 429,
  PRODUCT_NOT_FOUND: 404,
} as const;

const ORDER_ROUTE = '/api/v1/seckill/orders';

const REQUEST_ID = /^[A-Za-z0-9_.-]{1,64}$/;

const locals = (res: Response): Locals => res.locals as Locals;

const principalOf = (res: Response): Principal => {
  const principal = locals(res).principal;
  if (!principal) throw new HttpProblem(401, 'MISSING_TOKEN', 'an Authorization: Bearer token is required');
  return principal;
};

/** A 400 naming every offending field of a failed zod parse. */
const validationProblem = (error: z.ZodError, where: string): HttpProblem => {
  const errors = error.issues.flatMap((issue) => {
    const path = [where, ...issue.path.map(String)].join('.');
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => ({ field: `${path}.${key}`, message: 'is not a known field' }));
    return [{ field: path, message: issue.message }];
  });
  const detail = errors.map((e) => `${e.field}: ${e.message}`).join('; ');
  return new HttpProblem(400, 'VALIDATION_FAILED', detail, errors);
};

/** Parses with a zod schema; a failure names every offending field. */
const parse = <S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> => {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw validationProblem(result.error, where);
};

const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** `req.is('application/json')` with the common spelling matched first. */
const isJson = (req: Request): boolean => {
  const type = req.headers['content-type'];
  return type !== undefined && (JSON_TYPE.test(type) || req.is('application/json') === 'application/json');
};

const jsonBody = express.json({ limit: '16kb', strict: true, type: 'application/json' });

/** Reads and parses the JSON body: resolves with the parser's error, or null. */
const readBody = (req: Request, res: Response): Promise<{ error: unknown } | null> =>
  new Promise((resolve) => {
    jsonBody(req, res, (error?: unknown) => resolve(error === undefined ? null : { error }));
  });

const NOT_JSON: Problem = {
  status: 415,
  code: 'UNSUPPORTED_MEDIA_TYPE',
  detail: 'the body must be application/json',
};

const requireJson: RequestHandler = (req, _res, next) => {
  if (!isJson(req)) return next(new HttpProblem(NOT_JSON.status, NOT_JSON.code, NOT_JSON.detail));
  next();
};

/**
 * The 202 of an accepted order, written straight to the socket like the problems are (no content
 * negotiation, mime lookup or freshness check: the order id is a UUID, nothing in it needs escaping).
 */
const sendAccepted = (res: Response, orderId: string): void => {
  const body = `{"orderId":${JSON.stringify(orderId)},"status":"RESERVED"}`;
  res.statusCode = 202;
  res.setHeader('Location', `/api/v1/orders/${encodeURIComponent(orderId)}`);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
};

const orderBody = (o: OrderView) => ({
  orderId: o.orderId,
  productId: o.productId,
  quantity: o.quantity,
  status: o.status,
  ...(o.reason ? { reason: o.reason } : {}),
});

const toProblem = (error: unknown): HttpProblem | null => {
  if (error instanceof HttpProblem) return error;
  if (error instanceof InfrastructureUnavailable)
    return new HttpProblem(
      503,
      'UNAVAILABLE',
      'the service cannot take this request right now; retry shortly',
      [],
      {
        'Retry-After': '1',
      },
    );
  if (error instanceof VersionConflict)
    return new HttpProblem(409, 'CONCURRENT_UPDATE', 'the resource changed while this request ran; retry');
  if (error instanceof DomainError) return domainProblem(error);
  return bodyParserProblem(error);
};

const domainProblem = (error: DomainError): HttpProblem => {
  if (error instanceof OrderNotFound) return new HttpProblem(404, 'ORDER_NOT_FOUND', error.message);
  if (error instanceof ProductNotListed) return new HttpProblem(404, 'PRODUCT_NOT_FOUND', error.message);
  if (error instanceof InvalidProductTerms)
    return new HttpProblem(400, 'VALIDATION_FAILED', error.message, [
      { field: `body.${error.field}`, message: error.message },
    ]);
  if (error instanceof InvalidOrderQuantity)
    return new HttpProblem(400, 'VALIDATION_FAILED', error.message, [
      { field: 'body.quantity', message: error.message },
    ]);
  if (error instanceof ProductAlreadyListed) return new HttpProblem(409, error.code, error.message);
  if (error instanceof IllegalOrderTransition) {
    const code =
      error.command === 'PayOrder'
        ? 'ORDER_NOT_COMMITTED'
        : error.status === 'PAID'
          ? 'ORDER_ALREADY_PAID'
          : 'ORDER_STATE_CONFLICT';
    return new HttpProblem(409, code, error.message);
  }
  return new HttpProblem(409, error.code, error.message);
};

/** Anything else the HTTP stack itself marked as the client's fault (a path that is not valid percent-encoding, a
 * compressed body that does not inflate): a 400, never a 500. */
const clientFault = (error: unknown): HttpProblem | null => {
  if (typeof error !== 'object' || error === null) return null;
  const { status, statusCode } = error as { status?: unknown; statusCode?: unknown };
  const code = typeof status === 'number' ? status : statusCode;
  if (typeof code !== 'number' || code < 400 || code > 499) return null;
  const detail =
    error instanceof URIError ? 'the path is not valid percent-encoding' : 'the request could not be read';
  return new HttpProblem(400, 'BAD_REQUEST', detail);
};

const bodyParserProblem = (error: unknown): HttpProblem | null => {
  const type = typeof error === 'object' && error !== null ? (error as { type?: unknown }).type : undefined;
  switch (type) {
    case 'entity.parse.failed':
      return new HttpProblem(400, 'MALFORMED_JSON', 'the body is not valid JSON (a JSON object is expected)');
    case 'entity.too.large':
      return new HttpProblem(413, 'PAYLOAD_TOO_LARGE', 'the body is larger than 16 KiB');
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new HttpProblem(415, 'UNSUPPORTED_MEDIA_TYPE', 'the body must be UTF-8 JSON');
    case 'request.aborted':
    case 'request.size.invalid':
      return new HttpProblem(400, 'BAD_REQUEST', 'the body was cut short');
    default:
      return clientFault(error);
  }
};

/** The HTTP API of DESIGN §5. The user is always the token's subject, never a field of the body. */
export const createHttpApp = (deps: HttpDependencies): express.Express => {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');

  const rates = new AnswerRates();

  /** Gives every request its correlation id and counts its answer once it is sent. */
  const track = (req: Request, res: Response, route: string | null): void => {
    const started = process.hrtime.bigint();
    const given = req.get('x-request-id');
    const correlationId = given && REQUEST_ID.test(given) ? given : deps.ids.next();
    locals(res).correlationId = correlationId;
    res.setHeader('X-Request-Id', correlationId);
    res.on('finish', () => {
      const path =
        route ?? `${req.baseUrl}${(req.route as { path?: string } | undefined)?.path ?? 'unmatched'}`;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      deps.observer.request(req.method, path, res.statusCode, seconds);
    });
  };

  /**
   * The flood's route, in one handler: no chain of middlewares, and a rejection (the answer most buyers get) is
   * written directly rather than thrown through express's error handling. It is matched first, ahead of
   * the routers the other routes go through.
   */
  app.post(ORDER_ROUTE, async (req, res, next) => {
    track(req, res, ORDER_ROUTE);
    const instance = req.originalUrl.slice(0, 200);
    const refused = (problem: Problem) => sendProblem(res, problem, instance);
    let principal: Principal;
    try {
      principal = deps.tokens.verifySync(req.headers.authorization);
    } catch (error) {
      next(error);
      return;
    }
    if (!isJson(req)) {
      refused(NOT_JSON);
      return;
    }
    const unreadable = await readBody(req, res);
    if (unreadable) {
      next(unreadable.error);
      return;
    }
    const body = PlaceOrderBody.safeParse(req.body);
    if (!body.success) {
      refused(validationProblem(body.error, 'body'));
      return;
    }
    const result = await deps.placeOrder.execute({
      userId: principal.userId,
      productId: body.data.productId,
      quantity: body.data.quantity,
      correlationId: locals(res).correlationId,
    });
    rates.mark(result.ok);
    if (result.ok) {
      deps.observer.orderAnswer('RESERVED');
      sendAccepted(res, result.orderId);
      return;
    }
    deps.observer.orderAnswer(result.code);
    refused({ status: REJECTION_STATUS[result.code], code: result.code, detail: result.detail });
  });

  app.use((req, res, next) => {
    track(req, res, null);
    next();
  });

  const authenticate =
    (role?: 'admin'): RequestHandler =>
    async (req, res, next) => {
      try {
        const principal = await deps.tokens.verify(req.get('authorization'));
        if (role && principal.role !== role)
          throw new HttpProblem(403, 'FORBIDDEN', 'this needs an admin token');
        locals(res).principal = principal;
        next();
      } catch (error) {
        next(error);
      }
    };

  mountOps(app, deps);

  app.get('/api/v1/openapi.json', (_req, res) => {
    res.json(openApiDocument(deps.version));
  });

  app.use('/docs', swaggerUi.serve);
  app.get('/docs', swaggerUi.setup(null, { swaggerOptions: { url: '/api/v1/openapi.json' } }));

  app.get('/dashboard', (_req, res) => {
    res.type('html').send(DASHBOARD_PAGE);
  });

  const json = jsonBody;
  const api = express.Router();

  api.get('/orders/:orderId', authenticate(), async (req, res) => {
    const orderId = parse(OrderIdParam, req.params['orderId'], 'orderId');
    res.json(orderBody(await deps.queries.order(principalOf(res).userId, orderId)));
  });

  api.post('/orders/:orderId/payment', authenticate(), async (req, res) => {
    const orderId = parse(OrderIdParam, req.params['orderId'], 'orderId');
    res.json(
      orderBody(await deps.payOrder.execute(principalOf(res).userId, orderId, locals(res).correlationId)),
    );
  });

  api.post('/orders/:orderId/cancel', authenticate(), async (req, res) => {
    const orderId = parse(OrderIdParam, req.params['orderId'], 'orderId');
    res.json(
      orderBody(await deps.releaseOrder.cancel(principalOf(res).userId, orderId, locals(res).correlationId)),
    );
  });

  api.get('/products/:productId', async (req, res) => {
    const productId = parse(ProductIdParam, req.params['productId'], 'productId');
    res.json(await deps.queries.product(productId));
  });

  api.post('/admin/products', authenticate('admin'), requireJson, json, async (req, res) => {
    const input = parse(ListProductBody, req.body, 'body');
    const product = await deps.manageProducts.list(input, locals(res).correlationId);
    res.status(201).location(`/api/v1/products/${product.productId}`).json(product);
  });

  api.post('/admin/products/:productId/stock', authenticate('admin'), requireJson, json, async (req, res) => {
    const productId = parse(ProductIdParam, req.params['productId'], 'productId');
    const { quantity } = parse(RestockBody, req.body, 'body');
    res.json(await deps.manageProducts.restock(productId, quantity, locals(res).correlationId));
  });

  api.post('/admin/reconciliations', authenticate('admin'), async (_req, res) => {
    res.json(await deps.reconcile.run());
  });

  api.get('/admin/audit', authenticate('admin'), async (_req, res) => {
    res.json(await deps.audit.run());
  });

  api.get('/admin/dashboard', authenticate('admin'), async (_req, res) => {
    const figures = await deps.dashboard.gather();
    res.setHeader('Cache-Control', 'no-store');
    res.json({ ...figures, rates: { ...rates.perSecond(), instance: deps.instance } });
  });

  app.use('/api/v1', api);

  app.use((req, _res, next) => {
    next(new HttpProblem(404, 'NOT_FOUND', `no route for ${req.method} ${req.path}`));
  });

  app.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
    const problem = toProblem(error);
    if (problem) {
      if (problem.status === 503) deps.logger.warn({ path: req.path, err: String(error) }, 'answered 503');
      sendProblem(res, problem, req.originalUrl.slice(0, 200));
      return;
    }
    deps.logger.error(
      { path: req.path, err: error instanceof Error ? error.stack : String(error) },
      'unexpected error',
    );
    sendProblem(
      res,
      new HttpProblem(500, 'INTERNAL', 'something went wrong on our side'),
      req.originalUrl.slice(0, 200),
    );
  });

  return app;
};
