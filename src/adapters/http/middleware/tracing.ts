import type { ServerResponse } from 'node:http';
import type { Tracer } from '../../../application/index.js';
import { locals, type RouteRequest, type RouteResponse } from './tracking.js';

/** A handler of requests prepared as express prepares them: an express middleware, or the order route. */
export type RouteHandler = (
  req: RouteRequest,
  res: RouteResponse,
  next: (error?: unknown) => void,
) => void | Promise<void>;

/**
 * Resolves once the answer is done with: true when it was sent whole, false when the connection closed before it
 * was ('close' comes after 'finish' for every answer, so one listener tells both).
 */
const answered = (res: ServerResponse): Promise<boolean> =>
  new Promise((resolve) => {
    res.once('close', () => resolve(res.writableFinished));
  });

/**
 * A server span per sampled request, in the caller's trace when it sends a `traceparent`; an unsampled request
 * goes straight on, with nothing made for it. A sampled request's traceparent is left on `res.locals` for the
 * route: the order's gate call, its transaction and its messages are its children, and a 5xx answer's log line
 * names the trace. It is named by the route express matched, as the metrics are, carries the request's
 * correlation id (`X-Request-Id`) — the id in the logs and the events finds the trace, and the trace the events
 * — and is marked failed for a 5xx answer or a connection closed before the answer.
 */
export const traceRequests =
  (tracer: Tracer): RouteHandler =>
  (req, res, next) => {
    if (!tracer.draw()) {
      next();
      return;
    }
    const caller = req.headers.traceparent;
    tracer
      .root(
        req.method,
        async (span) => {
          if (span.traceparent !== undefined) locals(res).traceparent = span.traceparent;
          try {
            next();
          } catch (error) {
            next(error);
          }
          const finished = await answered(res);
          const route = (req.route as { path?: string } | undefined)?.path;
          // the route's pattern, never the path a client made up: one name per route
          span.rename(
            route === undefined
              ? `${req.method} unmatched`
              : `${req.method} ${locals(res).routeBase ?? req.baseUrl}${route}`,
          );
          span.set({
            'http.response.status_code': res.statusCode,
            'seckill.correlation_id': locals(res).correlationId ?? '',
          });
          if (!finished) span.fail('the connection closed before the answer was sent');
          else if (res.statusCode >= 500) span.fail(`answered ${res.statusCode}`);
        },
        {
          kind: 'server',
          attributes: { 'http.request.method': req.method },
          caller: typeof caller === 'string' ? caller : undefined,
        },
      )
      // the answer is express's to give: a span that could not end leaves nothing to handle
      .catch(() => undefined);
  };

/**
 * The order route in a span of its own, without a middleware layer in front of it: the flood's route is taken
 * ahead of express and everything mounted on it (app.ts), so that it pays for none of them. Unsampled, the route
 * is called as it is.
 */
export const tracedRoute = (tracer: Tracer, route: RouteHandler): RouteHandler => {
  const spans = traceRequests(tracer);
  return (req, res, next) => {
    void spans(req, res, (error?: unknown) => {
      if (error === undefined) void route(req, res, next);
      else next(error);
    });
  };
};
