import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type express from 'express';
import { DASHBOARD_HEADERS, withHeaders } from './security-headers.js';
import { sendFile, staticFiles } from './static-files.js';

/**
 * The live sale dashboard: a static page (`dashboard/index.html`) that polls `GET /api/v1/admin/dashboard` once
 * a second with the admin token the operator pastes in (kept for the browser tab only, in sessionStorage;
 * `#token=…` in the address fills it in). No assets from elsewhere: it works on a machine with no internet
 * access. Its style and script are files of their own (`dashboard/dashboard.css`, `dashboard/dashboard.js`,
 * plain browser code with no build step, and uPlot's two files, served from the package), so that its Content
 * Security Policy allows no inline code: a script injected into the page would not run, and could not read the
 * admin token. Every URL in it is relative to the page, so it works the same behind a load balancer that serves
 * the service under a path of its own. The page takes nothing from the server but these files: nothing in them
 * is filled in per request.
 *
 * Each poll may be answered by another API process: the figures come from the shared stores and the instance
 * registry, so any of them answers the same. The page keeps what it saw since it was opened (the last 10
 * minutes) for its charts; the answer rates are the instances' own, each from its last two beats, so that an
 * instance that dies stops adding to them instead of taking its counts away.
 */

/**
 * The folder of the page's own files, beside this module: `src/adapters/http/dashboard` when the tests run the
 * sources, `dist/src/adapters/http/dashboard` when the built service runs (`npm run build` copies it there,
 * scripts/copy-static.mjs).
 */
export const DASHBOARD_DIR = fileURLToPath(new URL('./dashboard/', import.meta.url));

/** uPlot (it draws the charts) is served from its npm package, as it is published. */
const UPLOT_DIR = dirname(createRequire(import.meta.url).resolve('uplot/dist/uPlot.iife.min.js'));

/** The page itself, served at `/dashboard`. */
export const DASHBOARD_PAGE_FILE = join(DASHBOARD_DIR, 'index.html');

/** Every file the page loads, by its path under /dashboard. Nothing else under /dashboard is served. */
export const DASHBOARD_FILES: ReadonlyMap<string, string> = new Map([
  ['/dashboard.css', join(DASHBOARD_DIR, 'dashboard.css')],
  ['/dashboard.js', join(DASHBOARD_DIR, 'dashboard.js')],
  ['/uPlot.min.css', join(UPLOT_DIR, 'uPlot.min.css')],
  ['/uPlot.iife.min.js', join(UPLOT_DIR, 'uPlot.iife.min.js')],
]);

/** `/dashboard` and its files, with the page's Content Security Policy (security-headers.ts). */
export const mountDashboard = (app: express.Express): void => {
  // a mounted middleware sees the page itself as well as what lies under it
  app.use('/dashboard', withHeaders(DASHBOARD_HEADERS), staticFiles(DASHBOARD_FILES));
  app.get('/dashboard', (req, res, next) => {
    // the page's URLs are relative to /dashboard: at /dashboard/ they would point one level too deep
    if (req.path.endsWith('/')) res.redirect(301, '../dashboard');
    else sendFile(res, next, DASHBOARD_PAGE_FILE);
  });
};
