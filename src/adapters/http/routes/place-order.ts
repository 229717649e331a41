import type { ServerResponse } from 'node:http';
import type { RouteContext } from '../dependencies.js';
import { AT_CAPACITY, retryAfterSeconds } from '../middleware/admission.js';
import { isJson, NOT_JSON, readBody, validationProblem } from '../middleware/input.js';
import type { RouteHandler } from '../middleware/tracing.js';
import { locals, type RouteRequest, type RouteResponse, type Track } from '../middleware/tracking.js';
import { ORDER_REJECTIONS } from '../order-rejections.js';
import { type Problem, sendProblem } from '../problem.js';
import { IdempotencyKeyHeader, PlaceOrderBody } from '../schemas.js';
import { API_HEADERS, setHeaders } from '../security-headers.js';
import type { Principal } from '../tokens.js';

export const ORDER_ROUTE = '/api/v1/seckill/orders';

const rejectionHeaders = (retryAfterMs: number | undefined, replayed: boolean) => {
  if (retryAfterMs === undefined && !replayed) return {};
  return {
    headers: {
      ...(retryAfterMs === undefined ? {} : { 'Retry-After': retryAfterSeconds(retryAfterMs) }),
      ...(replayed ? { 'Idempotent-Replayed': 'true' } : {}),
    },
  };
};

/**
 * The 202 of an accepted order, written straight to the socket like the problems are (no content
 * negotiation, mime lookup or freshness check: the order id is a UUID, nothing in it needs escaping).
 */
const sendAccepted = (res: ServerResponse, orderId: string, status: string, replayed: boolean): void => {
  const body = `{"orderId":${JSON.stringify(orderId)},"status":${JSON.stringify(status)}}`;
  res.statusCode = 202;
  if (replayed) res.setHeader('Idempotent-Replayed', 'true');
  res.setHeader('Location', `/api/v1/orders/${encodeURIComponent(orderId)}`);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
};

/**
 * `POST /api/v1/seckill/orders`, the flood's route, in one handler: no chain of middlewares, and a rejection
 * (the answer most buyers get) is written directly rather than thrown through express's error handling. It
 * tracks itself, sets helmet's headers (computed once, at start) and counts its answers (metrics and the
 * dashboard's rates); mount it ahead of everything else. It reads Node's request and response, with what express
 * puts on them (app.ts hands it the exact path's requests without express). A process already working on as many
 * orders as it may answers 429 before reading anything.
 */
export const placeOrderRoute =
  (ctx: RouteContext, track: Track): RouteHandler =>
  async (req, res, next) => {
    // first: every answer below, accepted, refused or thrown to the error handler, carries them
    setHeaders(res, API_HEADERS);
    track(req, res, ORDER_ROUTE);
    const instance = req.originalUrl.slice(0, 200);
    const refused = (problem: Problem) => sendProblem(res, problem, instance);
    if (!ctx.inFlight.enter()) {
      ctx.observer.orderAnswer('RATE_LIMITED');
      refused(AT_CAPACITY);
      return;
    }
    try {
      await placeOrder(ctx, req, res, next, refused);
    } finally {
      ctx.inFlight.leave();
    }
  };

const placeOrder = async (
  ctx: RouteContext,
  req: RouteRequest,
  res: RouteResponse,
  next: (error?: unknown) => void,
  refused: (problem: Problem) => void,
): Promise<void> => {
  let principal: Principal;
  try {
    principal = ctx.tokens.verifySync(req.headers.authorization);
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
  const rawKey = req.headers['idempotency-key'];
  const key = rawKey === undefined ? undefined : IdempotencyKeyHeader.safeParse(rawKey);
  if (key && !key.success) {
    refused(validationProblem(key.error, 'header.Idempotency-Key'));
    return;
  }
  const result = await ctx.placeOrder.execute({
    userId: principal.userId,
    productId: body.data.productId,
    quantity: body.data.quantity,
    correlationId: locals(res).correlationId,
    traceparent: locals(res).traceparent,
    clientAddress: () => ctx.clientAddress(req),
    pathToken: body.data.pathToken,
    idempotencyKey: key?.data,
  });
  ctx.rates.mark(result.ok);
  if (result.ok) {
    ctx.observer.orderAnswer('RESERVED');
    sendAccepted(res, result.orderId, result.status, result.replayed === true);
    return;
  }
  ctx.observer.orderAnswer(result.code);
  refused({
    status: ORDER_REJECTIONS[result.code].status,
    code: result.code,
    detail: result.detail,
    ...rejectionHeaders(result.retryAfterMs, result.replayed === true),
  });
};
