import type { ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import helmet, { type HelmetOptions } from 'helmet';

export type HeaderList = ReadonlyArray<readonly [name: string, value: string]>;

/**
 * The headers helmet's middleware sets with these options, found once by running it against a stub response.
 * Every directive below is static, so the list is the whole of what helmet would do per request; the order
 * route sets it with a few setHeader calls instead of running a middleware chain per buyer.
 */
export const headersOf = (options: HelmetOptions): HeaderList => {
  const headers: Array<readonly [string, string]> = [];
  const stub = {
    setHeader: (name: string, value: string | number) => headers.push([name, String(value)]),
    removeHeader: () => undefined,
  };
  let finished = false;
  helmet(options)({} as never, stub as never, (error?: unknown) => {
    if (error !== undefined) throw error instanceof Error ? error : new Error('helmet refused its options');
    finished = true;
  });
  // every option here is static, so helmet has set everything by now, the same for every answer
  if (!finished) throw new Error('helmet did not set its headers at once');
  return headers;
};

/** frame-ancestors 'none' on every answer: no page of this service is ever framed (clickjacking). */
const NO_FRAMING = { frameAncestors: ["'none'"] };

/**
 * What every answer carries besides its policy: no framing, no MIME sniffing, no referrer, HTTPS remembered
 * (helmet's defaults). No policy uses helmet's default directives: `upgrade-insecure-requests` would break the
 * pages where the service speaks plain HTTP (behind its load balancer, or on a laptop).
 */
const EVERY_ANSWER = { xFrameOptions: { action: 'deny' as const } };

/**
 * JSON and problem answers: nothing in them may run or load anything. The headers that only matter to an
 * HTML document (opener policy, origin clusters, DNS prefetch, IE's download and XSS filters, Flash policies)
 * are left off: the order route sets this list on every answer of the flood.
 */
export const API_HEADERS: HeaderList = headersOf({
  ...EVERY_ANSWER,
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], ...NO_FRAMING } },
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
});

/**
 * The live dashboard: its script and style are files of this service (no inline code), it reads the API of
 * this service, and nothing else.
 */
export const DASHBOARD_HEADERS: HeaderList = headersOf({
  ...EVERY_ANSWER,
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      connectSrc: ["'self'"],
      imgSrc: ["'self'"],
      baseUri: ["'none'"],
      formAction: ["'self'"],
      ...NO_FRAMING,
    },
  },
});

/**
 * Swagger UI: scripts from this service only. Its template carries inline <style> blocks and style attributes
 * and Swagger UI adds more as it renders, which hashes cannot cover: styles may be inline (a style cannot run
 * code). Its icons are data: images.
 */
export const DOCS_HEADERS: HeaderList = headersOf({
  ...EVERY_ANSWER,
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'", "'unsafe-inline'"],
      connectSrc: ["'self'"],
      imgSrc: ["'self'", 'data:'],
      fontSrc: ["'self'", 'data:'],
      baseUri: ["'none'"],
      formAction: ["'self'"],
      ...NO_FRAMING,
    },
  },
});

export const setHeaders = (res: ServerResponse, headers: HeaderList): void => {
  for (const [name, value] of headers) res.setHeader(name, value);
};

/** The list as a middleware (every route but the order route, which sets it itself). */
export const withHeaders =
  (headers: HeaderList): RequestHandler =>
  (_req, res, next) => {
    setHeaders(res, headers);
    next();
  };
