import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/** How the browser tests launch Chromium (as root, in a container: no sandbox). */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });

/** A row of the dashboard's instances table, as the operator reads it. */
export type ShownInstance = Readonly<{ role: string; pid: number; status: string }>;

/** The dashboard's instances table as shown now, row by row. */
export const instanceStatusesOn = (page: Page): Promise<ShownInstance[]> =>
  page.locator('#instances tr[data-instance]').evaluateAll((rows) =>
    rows.map((row) => {
      const data = (row as unknown as { dataset: Record<string, string> }).dataset;
      return { role: data['role'] ?? '', pid: Number(data['pid']), status: data['status'] ?? '' };
    }),
  );

export type OpenDashboard = Readonly<{
  page: Page;
  /** the instances table as shown now: role, pid and status (up, degraded, down) of each row */
  instanceStatuses(): Promise<ShownInstance[]>;
  /** the whole page, as a PNG */
  screenshot(path: string): Promise<void>;
  close(): Promise<void>;
}>;

/**
 * Opens the live dashboard of the service at `baseUrl` (a service, or the load balancer in front of several:
 * the page asks for everything with URLs relative to itself) in a Chromium of its own, hands it the admin
 * token, and resolves once the first figures are shown. Fails after 15 s without figures, with the page's own
 * words (a bad token, no service answering).
 */
export const openDashboard = async (baseUrl: string, adminToken: string): Promise<OpenDashboard> => {
  const browser = await launchChromium();
  try {
    const context = await browser.newContext({ viewport: { width: 1200, height: 820 } });
    const page = await context.newPage();
    const url = new URL('dashboard', baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
    url.hash = `token=${encodeURIComponent(adminToken)}`;
    await page.goto(url.href);
    // a poll that fails (a balancer that has not yet seen an API die) is followed by another a second later
    await page.waitForSelector('body[data-updated-at]', { timeout: 15_000 }).catch(async () => {
      const status = await page.textContent('#status').catch(() => null);
      throw new Error(`the dashboard at ${url.origin}${url.pathname} shows no figures: ${status}`);
    });
    return {
      page,
      instanceStatuses: () => instanceStatusesOn(page),
      screenshot: async (path) => {
        await page.screenshot({ path, fullPage: true });
      },
      close: () => browser.close(),
    };
  } catch (error) {
    await browser.close();
    throw error;
  }
};

/**
 * A page whose Content Security Policy violations are collected, both as the browser reports them to the page
 * (`securitypolicyviolation` events) and as it logs them on the console.
 */
export const watchedPage = async (context: BrowserContext): Promise<{ page: Page; violations: string[] }> => {
  const violations: string[] = [];
  const page = await context.newPage();
  await page.exposeFunction('reportViolation', (what: string) => violations.push(what));
  // an init script runs before the page's own and is not subject to its policy (in the browser's JavaScript:
  // this project's TypeScript has no DOM types)
  await page.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) =>
      window.reportViolation(event.violatedDirective + ' blocked ' + (event.blockedURI || 'inline code')));`,
  });
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) violations.push(`console: ${message.text()}`);
  });
  return { page, violations };
};
