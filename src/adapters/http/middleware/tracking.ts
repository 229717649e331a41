import type { Request, RequestHandler, Response } from 'express';
import type { IdGenerator } from '../../../application/index.js';
import type { HttpObserver } from '../dependencies.js';
import type { Principal } from '../tokens.js';

/** What the middleware leaves on `res.locals` for the routes. */
export type Locals = { correlationId: string; principal?: Principal };

export const locals = (res: Response): Locals => res.locals as Locals;

const REQUEST_ID = /^[A-Za-z0-9_.-]{1,64}$/;

/** Gives a request its correlation id (the caller's `X-Request-Id` when well formed) and counts its answer once sent. */
export type Track = (req: Request, res: Response, route: string | null) => void;

/** `route` names the metric's route; null: the route express matched (or `unmatched`). */
export const requestTracker =
  (ids: IdGenerator, observer: HttpObserver): Track =>
  (req, res, route) => {
    const started = process.hrtime.bigint();
    const given = req.get('x-request-id');
    const correlationId = given && REQUEST_ID.test(given) ? given : ids.next();
    locals(res).correlationId = correlationId;
    res.setHeader('X-Request-Id', correlationId);
    res.on('finish', () => {
      const path =
        route ?? `${req.baseUrl}${(req.route as { path?: string } | undefined)?.path ?? 'unmatched'}`;
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      observer.request(req.method, path, res.statusCode, seconds);
    });
  };

/** The tracker as a middleware, for every route but the order route (which tracks itself). */
export const trackRequests =
  (track: Track): RequestHandler =>
  (req, res, next) => {
    track(req, res, null);
    next();
  };
