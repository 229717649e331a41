import type { RequestHandler, Response } from 'express';
import type { Tracer } from '../../../application/index.js';
import { locals } from './tracking.js';

/** Resolves once the answer is sent, or the connection closes before it is. */
const answered = (res: Response): Promise<void> =>
  new Promise((resolve) => {
    res.once('finish', resolve);
    res.once('close', resolve);
  });

/**
 * A server span per request, in the caller's trace when it sends a `traceparent`. When it is sampled, its
 * traceparent is left on `res.locals` for the route: the order's gate call, its transaction and its messages
 * are its children, and a 5xx answer's log line names the trace. It is named by the route
 * express matched, as the metrics are, and carries the request's correlation id (`X-Request-Id`): the id in the
 * logs and the events finds the trace, and the trace the events.
 */
export const traceRequests =
  (tracer: Tracer): RequestHandler =>
  (req, res, next) => {
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
          await answered(res);
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
