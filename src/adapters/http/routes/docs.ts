import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type express from 'express';
import swaggerUi from 'swagger-ui-express';
import { DASHBOARD_PAGE, DASHBOARD_SCRIPT, DASHBOARD_STYLE } from '../dashboard-page.js';
import type { HttpDependencies } from '../dependencies.js';
import { openApiDocument } from '../openapi.js';
import { DASHBOARD_HEADERS, DOCS_HEADERS, withHeaders } from '../security-headers.js';

/** A file of an npm package the page uses, read once (uPlot draws the charts). */
const packageFile = (path: string): string =>
  readFileSync(createRequire(import.meta.url).resolve(path), 'utf8');

/** The dashboard's files, by path under /dashboard (served like Swagger UI's: not API routes). */
const DASHBOARD_FILES = new Map([
  ['/dashboard.css', { type: 'text/css; charset=utf-8', body: DASHBOARD_STYLE }],
  ['/dashboard.js', { type: 'text/javascript; charset=utf-8', body: DASHBOARD_SCRIPT }],
  ['/uPlot.min.css', { type: 'text/css; charset=utf-8', body: packageFile('uplot/dist/uPlot.min.css') }],
  [
    '/uPlot.iife.min.js',
    { type: 'text/javascript; charset=utf-8', body: packageFile('uplot/dist/uPlot.iife.min.js') },
  ],
]);

const dashboardFiles: express.RequestHandler = (req, res, next) => {
  const file = req.method === 'GET' || req.method === 'HEAD' ? DASHBOARD_FILES.get(req.path) : undefined;
  if (!file) {
    next();
    return;
  }
  res.type(file.type).send(file.body);
};

/**
 * The pages for people: the OpenAPI document, Swagger UI on it, and the live sale dashboard. Each page has
 * the Content Security Policy it needs and no more (security-headers.ts).
 */
export const mountDocs = (app: express.Express, deps: Pick<HttpDependencies, 'version'>): void => {
  app.get('/api/v1/openapi.json', (_req, res) => {
    res.json(openApiDocument(deps.version));
  });

  // a mounted middleware sees the page itself as well as what lies under it
  app.use('/docs', withHeaders(DOCS_HEADERS), swaggerUi.serve);
  app.get(
    '/docs',
    // no validator badge: it would send the document to validator.swagger.io
    swaggerUi.setup(null, { swaggerOptions: { url: '/api/v1/openapi.json', validatorUrl: null } }),
  );

  app.use('/dashboard', withHeaders(DASHBOARD_HEADERS), dashboardFiles);
  app.get('/dashboard', (req, res) => {
    // the page's URLs are relative to /dashboard: at /dashboard/ they would point one level too deep
    if (req.path.endsWith('/')) res.redirect(301, '../dashboard');
    else res.type('html').send(DASHBOARD_PAGE);
  });
};
