import { createHash, timingSafeEqual } from 'node:crypto';
import express, { type Request, type RequestHandler } from 'express';
import type { Logger, ReadinessProbe } from '../../application/index.js';
import type { HttpObserver } from './dependencies.js';
import { notFound, problemAnswers } from './error-mapping.js';
import { HttpProblem } from './problem.js';
import type { JwtTokens } from './tokens.js';

/** Who may read `/metrics` where it is mounted. */
export type MetricsAccess =
  /** the metrics listener: the operator's port, on loopback unless told otherwise */
  | Readonly<{ kind: 'open' }>
  /** the API port with SECKILL_METRICS_TOKEN: `Bearer <token>`, or Basic with the token as the password */
  | Readonly<{ kind: 'credential'; token: string }>
  /** the API port without SECKILL_METRICS_TOKEN */
  | Readonly<{ kind: 'closed' }>;

/** Who reads the dependencies' error messages on `/readyz`; everyone else learns `ok` or `failing` only. */
export type ReadinessDetail =
  Readonly<{ kind: 'everyone' }> | Readonly<{ kind: 'admins'; tokens: JwtTokens }>;

export type OpsDependencies = Readonly<{
  /** the dependencies' checks, run at most about once a second however often /readyz is asked */
  readinessProbe: Pick<ReadinessProbe, 'outcomes'>;
  observer: Pick<HttpObserver, 'render'>;
  metrics: MetricsAccess;
  readiness: ReadinessDetail;
}>;

const CHALLENGE = 'Bearer realm="seckill metrics", Basic realm="seckill metrics"';

const unauthorized = (code: string, detail: string) =>
  new HttpProblem(401, code, detail, [], { 'WWW-Authenticate': CHALLENGE });

/** The credential an Authorization header carries: the bearer token, or Basic's password; null: no header. */
const presentedCredential = (authorization: string | undefined): string | null => {
  if (!authorization) return null;
  const bearer = /^Bearer +(\S+) *$/i.exec(authorization);
  if (bearer?.[1]) return bearer[1];
  const basic = /^Basic +([A-Za-z0-9+/=]+) *$/i.exec(authorization);
  if (!basic?.[1]) return '';
  const userAndPassword = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = userAndPassword.indexOf(':');
  return colon < 0 ? '' : userAndPassword.slice(colon + 1);
};

/** Equal-length digests, compared in constant time: neither the token nor its length leaks through timing. */
const digest = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();

const metricsGate = (access: MetricsAccess): RequestHandler => {
  switch (access.kind) {
    case 'open':
      return (_req, _res, next) => next();
    case 'closed':
      return (_req, _res, next) =>
        next(
          new HttpProblem(
            404,
            'METRICS_NOT_SERVED',
            'metrics are not served on this port: set SECKILL_METRICS_TOKEN and scrape with it ' +
              '(Authorization: Bearer <token>), or set SECKILL_METRICS_PORT and scrape that port (loopback by default)',
          ),
        );
    case 'credential': {
      const expected = digest(access.token);
      return (req, _res, next) => {
        const given = presentedCredential(req.get('authorization'));
        if (given === null)
          return next(
            unauthorized(
              'MISSING_CREDENTIAL',
              'metrics need the SECKILL_METRICS_TOKEN credential: Authorization: Bearer <token>, or Basic with the token as the password',
            ),
          );
        if (!timingSafeEqual(digest(given), expected))
          return next(unauthorized('INVALID_CREDENTIAL', 'the metrics credential is not valid'));
        next();
      };
    }
  }
};

/** Whether this caller reads the error messages: anyone on the operator's port, an admin token elsewhere. */
const readsDetails = async (detail: ReadinessDetail, req: Request): Promise<boolean> => {
  if (detail.kind === 'everyone') return true;
  const authorization = req.get('authorization');
  if (!authorization) return false;
  // a bad token is no reason to fail a probe: the caller gets the answer without the messages
  const principal = await detail.tokens.verify(authorization).catch(() => null);
  return principal?.role === 'admin';
};

/**
 * Liveness, readiness and Prometheus metrics: on the API port (metrics behind a credential, readiness details
 * for admins), and on the metrics listener (what the operator reaches on loopback).
 */
export const mountOps = (app: express.Express, deps: OpsDependencies): void => {
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });

  app.get('/readyz', async (req, res) => {
    const failures = await deps.readinessProbe.outcomes();
    const ready = failures.every(([, failure]) => failure === null);
    const checks = Object.fromEntries(
      failures.map(([name, failure]) => [name, failure === null ? 'ok' : 'failing']),
    );
    // the messages name hosts, ports and users: only those who run the service read them
    const details = (await readsDetails(deps.readiness, req))
      ? {
          details: Object.fromEntries(
            failures.flatMap(([name, failure]) => (failure === null ? [] : [[name, failure]])),
          ),
        }
      : {};
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not ready', checks, ...details });
  });

  app.get('/metrics', metricsGate(deps.metrics), async (_req, res) => {
    const { contentType, body } = await deps.observer.render();
    res.type(contentType).send(body);
  });
};

/**
 * The metrics listener (SECKILL_METRICS_PORT): /metrics, /healthz and /readyz alone, without a credential, on
 * an API process and a worker alike; anything else is a 404 problem.
 */
export const createOpsApp = (deps: OpsDependencies, logger: Logger): express.Express => {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  mountOps(app, deps);
  app.use(notFound);
  app.use(problemAnswers(logger));
  return app;
};
