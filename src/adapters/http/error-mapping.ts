import type { Duplex } from 'node:stream';
import type { ErrorRequestHandler, RequestHandler } from 'express';
import { InfrastructureUnavailable, type Logger, VersionConflict } from '../../application/index.js';
import {
  DomainError,
  IllegalOrderTransition,
  InvalidOrderQuantity,
  InvalidProductTerms,
  OrderNotFound,
  ProductAlreadyListed,
  ProductNotListed,
} from '../../domain/index.js';
import { locals, type RouteRequest, type RouteResponse } from './middleware/tracking.js';
import { HttpProblem, sendProblem } from './problem.js';
import { API_HEADERS } from './security-headers.js';

/** What a thrown error means to the client, as a problem; null for a fault of ours (a 500). */
export const toProblem = (error: unknown): HttpProblem | null => {
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

/** After every route: a request nothing answered. */
export const notFound: RequestHandler = (req, _res, next) => {
  next(new HttpProblem(404, 'NOT_FOUND', `no route for ${req.method} ${req.path}`));
};

/** What finds a request again: its correlation id, and its trace when it was sampled (`trace_id`, `span_id`). */
const requestIds = (res: RouteResponse): Record<string, string> => {
  const { correlationId, traceparent } = locals(res);
  const [, traceId, spanId] = traceparent?.split('-') ?? [];
  return {
    ...(correlationId === undefined ? {} : { correlationId }),
    ...(traceId === undefined || spanId === undefined ? {} : { trace_id: traceId, span_id: spanId }),
  };
};

/** What the error handler answers with: the problem for the error, in the request's words. */
export type ProblemAnswers = (error: unknown, req: RouteRequest, res: RouteResponse) => void;

/** Every error becomes a problem answer; what is not the client's fault is logged, as a 500. */
export const answerProblems =
  (logger: Logger): ProblemAnswers =>
  (error, req, res) => {
    const instance = req.originalUrl.slice(0, 200);
    // the path the client asked for, without its query (express's req.path at the app's level)
    const path = req.originalUrl.split('?', 1)[0];
    const problem = toProblem(error);
    if (problem) {
      if (problem.status === 503)
        logger.warn({ path, ...requestIds(res), err: String(error) }, 'answered 503');
      sendProblem(res, problem, instance);
      return;
    }
    logger.error(
      { path, ...requestIds(res), err: error instanceof Error ? error.stack : String(error) },
      'unexpected error',
    );
    sendProblem(res, new HttpProblem(500, 'INTERNAL', 'something went wrong on our side'), instance);
  };

/** `answerProblems` as an express app's last handler. */
export const problemAnswers = (logger: Logger): ErrorRequestHandler => {
  const answer = answerProblems(logger);
  return (error: unknown, req, res, _next) => answer(error, req, res);
};

/** What Node's HTTP parser or the server's timeouts refused, as a status, a code and a detail. */
const unreadable = (error: NodeJS.ErrnoException) => {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'HEADERS_TOO_LARGE', detail: 'the request headers are too large' };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        code: 'REQUEST_TIMEOUT',
        detail: 'the request did not arrive in time (SECKILL_HTTP_HEADERS_TIMEOUT_MS, _REQUEST_TIMEOUT_MS)',
      };
    default:
      return { status: 400, code: 'BAD_REQUEST', detail: 'the request could not be parsed as HTTP' };
  }
};

const REASONS: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

const RAW_HEADERS = API_HEADERS.map(([name, value]) => `${name}: ${value}\r\n`).join('');

/**
 * Whether the connection's current request has its answer already, sent or on its way (Node's internals: the
 * socket's response, and its parser's request). A request answered before its body arrived (a 401 needs no body)
 * is one: Node keeps reading the body to throw it away, and the server's timeout may still cut it. A second
 * answer would be taken by the client for the answer to its next request.
 */
const answered = (socket: Duplex): boolean => {
  const response = Reflect.get(socket, '_httpMessage') as { headersSent?: boolean } | null | undefined;
  if (response) return response.headersSent === true;
  const parser = Reflect.get(socket, 'parser') as
    { incoming?: { complete?: boolean } | null } | null | undefined;
  return parser?.incoming?.complete === false;
};

/**
 * Requests Node's HTTP parser refuses before express sees them (bad bytes in the path, oversized headers), and
 * requests that do not arrive within the server's timeouts, still get a problem+json answer with the headers
 * of every other answer: the server's `clientError` listener. Then the connection closes; nothing is written
 * when the request has its answer already.
 */
export const answerUnreadableRequest = (error: NodeJS.ErrnoException, socket: Duplex): void => {
  if (!socket.writable || answered(socket)) {
    socket.destroy();
    return;
  }
  const { status, code, detail } = unreadable(error);
  const title = REASONS[status] ?? 'Bad Request';
  const type = `/problems/${code.toLowerCase().replaceAll('_', '-')}`;
  const body = JSON.stringify({ type, title, status, code, detail });
  socket.end(
    `HTTP/1.1 ${status} ${title}\r\n${RAW_HEADERS}` +
      `Content-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    // the answer is out: a client still sending (a slow body) is cut here, not when it stops
    () => socket.destroy(),
  );
};
