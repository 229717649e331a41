import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type express from 'express';
import { ProductIdParam } from './schemas.js';
import { DASHBOARD_HEADERS, withHeaders } from './security-headers.js';
import { sendFile, staticFiles } from './static-files.js';

/**
 * The buyer's page, `/sale/{productId}`: a static page (`sale/index.html`, `sale/sale.css`, `sale/sale.js`, plain
 * browser code with no build step) that shows the product and its stock left, counts down to the sale window,
 * asks for the sale path token and places the order with an `Idempotency-Key` of its own (sent again with the same
 * key after a timeout or a cut connection), then follows the order's fate through its event stream
 * (`EventSource`, opened with a stream ticket), with pay and cancel. It reads the product id from its own URL and
 * everything else from the API; nothing in it is filled in per request.
 *
 * The buyer's token is kept for the browser tab only (sessionStorage), never written to a URL: the page takes it
 * pasted from the identity provider, or, on a demo (the development secret, this machine only), from
 * `POST /api/v1/dev/login`. Its policy is the dashboard's: its own script and style, the API of this service,
 * nothing else — no inline code runs, so a script injected into it could not read the token.
 */

/** The folder of the page's files, beside this module (copied into dist by scripts/copy-static.mjs). */
export const SALE_DIR = fileURLToPath(new URL('./sale/', import.meta.url));

/** The page itself, served at `/sale/{productId}`. */
export const SALE_PAGE_FILE = join(SALE_DIR, 'index.html');

/** Every file the page loads, by its path under /sale. Nothing else under /sale is served. */
export const SALE_FILES: ReadonlyMap<string, string> = new Map([
  ['/sale.css', join(SALE_DIR, 'sale.css')],
  ['/sale.js', join(SALE_DIR, 'sale.js')],
]);

/** `/sale/{productId}` and its files; an id that is no product id is the API's 404. */
export const mountSalePage = (app: express.Express): void => {
  app.use('/sale', withHeaders(DASHBOARD_HEADERS), staticFiles(SALE_FILES));
  app.get('/sale/:productId', (req, res, next) => {
    if (!ProductIdParam.safeParse(req.params['productId']).success) next();
    else sendFile(res, next, SALE_PAGE_FILE);
  });
};
