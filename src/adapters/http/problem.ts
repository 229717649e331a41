import type { ServerResponse } from 'node:http';

export type FieldProblem = Readonly<{ field: string; message: string }>;

/** What a problem answer says; `HttpProblem` is the same, thrown. */
export type Problem = Readonly<{
  status: number;
  code: string;
  detail: string;
  errors?: readonly FieldProblem[];
  headers?: Readonly<Record<string, string>>;
}>;

/** An answer in RFC 9457 form (`application/problem+json`) with a stable machine-readable `code`. */
export class HttpProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors: readonly FieldProblem[] = [],
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
    this.name = 'HttpProblem';
  }
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/**
 * Writes the problem straight to the socket: the flood's rejections are most of what the service answers, so
 * this path skips express's content negotiation and mime lookup.
 */
const types = new Map<string, string>();
const typeOf = (code: string): string => {
  let type = types.get(code);
  if (type === undefined) {
    type = `/problems/${code.toLowerCase().replaceAll('_', '-')}`;
    types.set(code, type);
  }
  return type;
};

export const sendProblem = (res: ServerResponse, problem: Problem, instance: string): void => {
  const errors = problem.errors ?? [];
  const body = JSON.stringify({
    type: typeOf(problem.code),
    title: TITLES[problem.status] ?? 'Error',
    status: problem.status,
    code: problem.code,
    detail: problem.detail,
    instance,
    ...(errors.length > 0 ? { errors } : {}),
  });
  if (problem.headers)
    for (const [name, value] of Object.entries(problem.headers)) res.setHeader(name, value);
  res.statusCode = problem.status;
  res.setHeader('Content-Type', 'application/problem+json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
};
