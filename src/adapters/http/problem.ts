import type { Response } from 'express';

export type FieldProblem = Readonly<{ field: string; message: string }>;

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

export const sendProblem = (res: Response, problem: HttpProblem, instance: string): void => {
  for (const [name, value] of Object.entries(problem.headers)) res.setHeader(name, value);
  res
    .status(problem.status)
    .type('application/problem+json')
    .send(
      JSON.stringify({
        type: `/problems/${problem.code.toLowerCase().replaceAll('_', '-')}`,
        title: TITLES[problem.status] ?? 'Error',
        status: problem.status,
        code: problem.code,
        detail: problem.detail,
        instance,
        ...(problem.errors.length > 0 ? { errors: problem.errors } : {}),
      }),
    );
};
