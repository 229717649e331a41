import type { IncomingMessage, ServerResponse } from 'node:http';
import express, { type RequestHandler } from 'express';
import typeis from 'type-is';
import type { z } from 'zod';
import { HttpProblem, type Problem } from '../problem.js';

/** A 400 naming every offending field of a failed zod parse. */
export const validationProblem = (error: z.ZodError, where: string): HttpProblem => {
  const errors = error.issues.flatMap((issue) => {
    const path = [where, ...issue.path.map(String)].join('.');
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => ({ field: `${path}.${key}`, message: 'is not a known field' }));
    return [{ field: path, message: issue.message }];
  });
  const detail = errors.map((e) => `${e.field}: ${e.message}`).join('; ');
  return new HttpProblem(400, 'VALIDATION_FAILED', detail, errors);
};

/** Parses with a zod schema; a failure names every offending field. */
export const parse = <S extends z.ZodType>(schema: S, value: unknown, where: string): z.output<S> => {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw validationProblem(result.error, where);
};

const JSON_TYPE = /^application\/json\s*(;|$)/i;

/** `req.is('application/json')` (type-is, as express asks it) with the common spelling matched first. */
export const isJson = (req: IncomingMessage): boolean => {
  const type = req.headers['content-type'];
  return (
    type !== undefined && (JSON_TYPE.test(type) || typeis(req, ['application/json']) === 'application/json')
  );
};

export const jsonBody = express.json({ limit: '16kb', strict: true, type: 'application/json' });

/**
 * Reads and parses the JSON body into `req.body`: resolves with the parser's error, or null. body-parser reads
 * Node's request alone (its headers and its stream), so it takes the order route's request as it is.
 */
export const readBody = (req: IncomingMessage, res: ServerResponse): Promise<{ error: unknown } | null> =>
  new Promise((resolve) => {
    jsonBody(req, res, (error?: unknown) => resolve(error === undefined ? null : { error }));
  });

export const NOT_JSON: Problem = {
  status: 415,
  code: 'UNSUPPORTED_MEDIA_TYPE',
  detail: 'the body must be application/json',
};

export const requireJson: RequestHandler = (req, _res, next) => {
  if (!isJson(req)) return next(new HttpProblem(NOT_JSON.status, NOT_JSON.code, NOT_JSON.detail));
  next();
};
