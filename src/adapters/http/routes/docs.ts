import type express from 'express';
import swaggerUi from 'swagger-ui-express';
import { DASHBOARD_PAGE } from '../dashboard-page.js';
import type { HttpDependencies } from '../dependencies.js';
import { openApiDocument } from '../openapi.js';

/** The pages for people: the OpenAPI document, Swagger UI on it, and the live sale dashboard. */
export const mountDocs = (app: express.Express, deps: Pick<HttpDependencies, 'version'>): void => {
  app.get('/api/v1/openapi.json', (_req, res) => {
    res.json(openApiDocument(deps.version));
  });

  app.use('/docs', swaggerUi.serve);
  app.get('/docs', swaggerUi.setup(null, { swaggerOptions: { url: '/api/v1/openapi.json' } }));

  app.get('/dashboard', (_req, res) => {
    res.type('html').send(DASHBOARD_PAGE);
  });
};
