import express from 'express';
import { AnswerRates } from './answer-rates.js';
import type { HttpDependencies, RouteContext } from './dependencies.js';
import { notFound, problemAnswers } from './error-mapping.js';
import { InFlightBound } from './middleware/admission.js';
import { keepRouteBase, requestTracker, trackRequests } from './middleware/tracking.js';
import { traceRequests, tracedRoute } from './middleware/tracing.js';
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

/** The HTTP API (docs/api.md). The user is always the token's subject, never a field of the body. */
export const createHttpApp = (deps: HttpDependencies): express.Express => {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('query parser', 'simple');
  // req.ip: the socket's address, or the client an X-Forwarded-For names through trusted proxies only
  app.set('trust proxy', deps.trustProxy);

  const ctx: RouteContext = {
    ...deps,
    rates: new AnswerRates(),
    inFlight: new InFlightBound(deps.ordersInFlightMax),
  };
  const track = requestTracker(deps.ids, deps.observer);

  const tracer = deps.tracer?.enabled ? deps.tracer : null;
  // the flood's route first, ahead of every middleware the other routes go through (it sets API_HEADERS itself);
  // when tracing is on, it draws its trace itself
  const orderRoute = placeOrderRoute(ctx, track);
  app.post(ORDER_ROUTE, tracer ? tracedRoute(tracer, orderRoute) : orderRoute);
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
  return app;
};
