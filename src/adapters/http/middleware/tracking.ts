import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import type { IdGenerator } from '../../../application/index.js';
import type { HttpObserver } from '../dependencies.js';
import type { Principal } from '../tokens.js';

/** What the middleware leaves on `res.locals` for the routes. */
export type Locals = {
  correlationId: string;
  principal?: Principal;
  routeBase?: string;
  /** the request's span, when tracing is on and it is sampled */
  traceparent?: string;
};

export const locals = (res: Readonly<{ locals: Record<string, unknown> }>): Locals => res.locals as Locals;

/**
 * What the tracker, the tracer, the error answers and the order route read of a request: Node's own, with what
 * express puts on it before its routes (and the server's listener puts on an order it takes ahead of express).
 * An express request is one; the order route needs none of express's request methods.
 */
export type RouteRequest = IncomingMessage & {
  method: string;
  originalUrl: string;
  baseUrl: string;
  /** the route matched (express's Route: its `path`) */
  route?: unknown;
  /** the parsed body, once read */
  body?: unknown;
};

/** Node's response with express's `res.locals`. */
export type RouteResponse = ServerResponse & { locals: Record<string, unknown> };

const REQUEST_ID = /^[A-Za-z0-9_.-]{1,64}$/;

/** Gives a request its correlation id (the caller's `X-Request-Id` when well formed) and counts its answer once sent. */
export type Track = (req: RouteRequest, res: RouteResponse, route: string | null) => void;

/** `route` names the metric's route; null: the route express matched (or `unmatched`). */
export const requestTracker =
  (ids: IdGenerator, observer: HttpObserver): Track =>
  (req, res, route) => {
    const started = performance.now();
    const given = req.headers['x-request-id'];
    const correlationId = typeof given === 'string' && REQUEST_ID.test(given) ? given : ids.next();
    locals(res).correlationId = correlationId;
    res.setHeader('X-Request-Id', correlationId);
    res.on('finish', () => {
      const seconds = (performance.now() - started) / 1000;
      observer.request(req.method, route ?? matchedRoute(req, res), res.statusCode, seconds);
    });
  };

/** The route express matched, with the path its router is mounted on; `unmatched` when none matched. */
const matchedRoute = (req: RouteRequest, res: RouteResponse): string => {
  const path = (req.route as { path?: string } | undefined)?.path;
  if (path === undefined) return 'unmatched';
  // an error leaving a router resets req.baseUrl before the answer is sent: the mount path kept on the way in
  return `${locals(res).routeBase ?? req.baseUrl}${path}`;
};

/**
 * Mounted with each router: keeps the router's mount path, so that an error answered after it left the router
 * is labelled with the same route (`/api/v1/orders/:orderId`) as a success of that route.
 */
export const keepRouteBase: RequestHandler = (req, res, next) => {
  locals(res).routeBase = req.baseUrl;
  next();
};

/** The tracker as a middleware, for every route but the order route (which tracks itself). */
export const trackRequests =
  (track: Track): RequestHandler =>
  (req, res, next) => {
    track(req, res, null);
    next();
  };
