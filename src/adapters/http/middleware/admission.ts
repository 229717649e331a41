import type { Request, RequestHandler, Response } from 'express';
import type { RateDecision, RateLimiter } from '../../../application/index.js';
import { HttpProblem, type Problem } from '../problem.js';
import { locals } from './tracking.js';

/** Whole seconds until a refused caller may try again, for `Retry-After` (at least 1). */
export const retryAfterSeconds = (ms: number): string => String(Math.max(1, Math.ceil(ms / 1000)));

/**
 * The bound on order requests one process works on at once. Past it, a request is answered 429 at once:
 * during a flood a queue would only make every buyer wait longer for the same "sold out", and the requests
 * it holds back cost nothing in Redis or MySQL. 0 turns the bound off.
 */
export class InFlightBound {
  private inFlight = 0;

  constructor(readonly max: number) {}

  /** false when the process is full; otherwise the caller must `leave()` once answered. */
  enter(): boolean {
    if (this.max > 0 && this.inFlight >= this.max) return false;
    this.inFlight += 1;
    return true;
  }

  leave(): void {
    this.inFlight -= 1;
  }
}

export const AT_CAPACITY: Problem = {
  status: 429,
  code: 'RATE_LIMITED',
  detail: 'the service is taking as many orders as it can right now; retry in a moment',
  headers: { 'Retry-After': '1' },
};

/** The caller a budget counts: the token's subject when there is one, the client address otherwise. */
const callerOf = (req: Request, res: Response): string => {
  const principal = locals(res).principal;
  return principal ? `user:${principal.userId}` : `address:${req.ip ?? 'unknown'}`;
};

/** The client address alone (`req.ip`, which honours SECKILL_TRUST_PROXY). */
const addressOf = (req: Request): string => req.ip ?? 'unknown';

const spend =
  (limiter: RateLimiter, keyOf: (req: Request, res: Response) => string, what: string): RequestHandler =>
  (req, res, next) => {
    limiter.tryConsume(keyOf(req, res)).then((decision: RateDecision) => {
      if (decision.allowed) return next();
      // a spent budget: RATE_LIMITED, saying which budget and when to come back
      next(
        new HttpProblem(429, 'RATE_LIMITED', `too many ${what}, slow down`, [], {
          'Retry-After': retryAfterSeconds(decision.retryAfterMs),
        }),
      );
    }, next);
  };

const PASS: RequestHandler = (_req, _res, next) => next();

/**
 * A route's budget: the caller (buyer, or address when anonymous) spends one point per request; a spent
 * budget is a 429 with `Retry-After`. Mount it after `authenticate`, so that a buyer is counted as a buyer.
 */
export const budget = (limiter: RateLimiter | null, what: string): RequestHandler =>
  limiter ? spend(limiter, callerOf, what) : PASS;

/** The per-address budget: every request from one client address spends from one budget, whoever sends it. */
export const addressBudget = (limiter: RateLimiter | null, what: string): RequestHandler =>
  limiter ? spend(limiter, addressOf, `${what} from this address`) : PASS;
