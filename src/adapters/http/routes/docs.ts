import type express from 'express';
import swaggerUi from 'swagger-ui-express';
import { mountDashboard } from '../dashboard-files.js';
import { mountSalePage } from '../sale-page.js';
import type { HttpDependencies } from '../dependencies.js';
import { openApiDocument } from '../openapi.js';
import { DOCS_HEADERS, withHeaders } from '../security-headers.js';

/**
 * The pages for people: the OpenAPI document, Swagger UI on it, the live sale dashboard and the buyer's page. Each page has
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

  // the dashboard's page and files (dashboard-files.ts)
  mountDashboard(app);
  // the buyer's page (sale-page.ts)
  mountSalePage(app);
};
