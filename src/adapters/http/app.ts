import type { RequestListener } from 'node:http';
import express from 'express';
import proxyaddr from 'proxy-addr';
import { AnswerRates } from './answer-rates.js';
import type { HttpDependencies, RouteContext } from './dependencies.js';
import { answerProblems, notFound, type ProblemAnswers, problemAnswers } from './error-mapping.js';
import { InFlightBound } from './middleware/admission.js';
import {
  keepRouteBase,
  requestTracker,
  type RouteRequest,
  type RouteResponse,
  trackRequests,
} from './middleware/tracking.js';
import { type RouteHandler, traceRequests, tracedRoute } from './middleware/tracing.js';
import { mountOps } from './ops.js';
import { adminRouter } from './routes/admin.js';
import { devLoginRouter } from './routes/dev-login.js';
import { mountDocs } from './routes/docs.js';
import { ordersRouter } from './routes/orders.js';
import { ORDER_ROUTE, placeOrderRoute } from './routes/place-order.js';
import { productsRouter } from './routes/products.js';
import { API_HEADERS, withHeaders } from './security-headers.js';

/** The routers under `/api/v1`, tried in this order; a new one is a file in routes/ and a line here. */
const API_ROUTERS: ReadonlyArray<(ctx: RouteContext) => express.Router> = [
  ordersRouter,
  productsRouter,
  adminRouter,
  devLoginRouter,
];

/** The HTTP API: the express app (every route), and the server's request listener in front of it. */
export type HttpApp = Readonly<{ express: express.Express; listener: RequestListener }>;

/**
 * The server's request listener. A POST to the order route's exact path goes straight to the route's handler,
 * without express's router (which builds a `next`, a final handler and its layer matches for each request) and
 * without express's own preparation of the request: express sets the prototype of Node's request and response
 * to its own for every request, and that step alone made about 5 KB per answer outlive the young generation —
 * memory only a full collection takes back, and under a flood most of what drove the full collections
 * (measured with V8's GC trace, docs/operations.md; why V8 keeps it, not found). The route reads Node's
 * request and response, with what express would have put on them (its path, the matched route, `res.locals`).
 * Everything else, the order route spelled otherwise (a query string, a trailing slash, another case) included,
 * goes through express, where the same handler is the same route.
 */
const orderRouteFirst = (
  app: express.Express,
  route: unknown,
  handler: RouteHandler,
  errors: ProblemAnswers,
): RequestListener => {
  return (incoming, outgoing) => {
    if (incoming.method !== 'POST' || incoming.url !== ORDER_ROUTE) {
      app(incoming, outgoing);
      return;
    }
    const req: RouteRequest = Object.assign(incoming, {
      method: 'POST',
      originalUrl: ORDER_ROUTE,
      baseUrl: '',
      route,
    });
    const res: RouteResponse = Object.assign(outgoing, { locals: {} });
    const failed = (error: unknown) => errors(error, req, res);
    // the route passes on errors only; a rejection is one too, as express takes it
    const next = (error?: unknown) => failed(error ?? new Error('the order route passed its request on'));
    Promise.resolve(handler(req, res, next)).catch(failed);
  };
};

/** The HTTP API (docs/api.md). The user is always the token's subject, never a field of the body. */
export const createHttpApp = (deps: HttpDependencies): HttpApp => {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // req.ip: the socket's address, or the client an X-Forwarded-For names through trusted proxies only
  app.set('trust proxy', deps.trustProxy);

  const trust = app.get('trust proxy fn') as Parameters<typeof proxyaddr>[1];
  const ctx: RouteContext = {
    ...deps,
    rates: new AnswerRates(),
    inFlight: new InFlightBound(deps.ordersInFlightMax),
    clientAddress: (req) => proxyaddr(req, trust),
  };
  const track = requestTracker(deps.ids, deps.observer);

  const tracer = deps.tracer?.enabled ? deps.tracer : null;
  // the flood's route first, ahead of every middleware the other routes go through (it sets API_HEADERS itself),
  // and ahead of express itself for its exact path (orderRouteFirst); when tracing is on, it draws its trace itself
  const orderHandler = tracer
    ? tracedRoute(tracer, placeOrderRoute(ctx, track))
    : placeOrderRoute(ctx, track);
  const orderRoute = app.route(ORDER_ROUTE).post(orderHandler);
  // a span per request of every other route, around everything else
  if (tracer) app.use(traceRequests(tracer));
  // helmet's headers on every answer; the pages of mountDocs replace the policy with their own
  app.use(withHeaders(API_HEADERS));
  app.use(trackRequests(track));
  mountOps(app, {
    readinessProbe: deps.readinessProbe,
    observer: deps.observer,
    metrics:
      deps.metricsToken === null ? { kind: 'closed' } : { kind: 'credential', token: deps.metricsToken },
    readiness: { kind: 'admins', tokens: deps.tokens },
  });
  mountDocs(app, deps);
  for (const router of API_ROUTERS) app.use('/api/v1', keepRouteBase, router(ctx));

  app.use(notFound);
  app.use(problemAnswers(deps.logger));
  return {
    express: app,
    listener: orderRouteFirst(app, orderRoute, orderHandler, answerProblems(deps.logger)),
  };
};
