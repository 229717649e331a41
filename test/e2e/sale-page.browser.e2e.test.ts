import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, Page } from 'playwright-core';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { launchChromium, watchedPage } from '../support/dashboard-browser.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';
import { memoryDatabaseOf } from '../support/drained.js';

const SCREENSHOT = fileURLToPath(new URL('../../docs/sale-page.png', import.meta.url));

/** how long after the listing the sale opens: the page counts it down */
const OPENS_IN_MS = 6_000;

const phaseOf = (page: Page): Promise<string | null> => page.getAttribute('body', 'data-phase');

describe("the buyer's page in a browser", () => {
  let service: SeckillService;
  let api: ApiClient;
  let browser: Browser;

  beforeAll(async () => {
    service = await startMemoryService();
    api = new ApiClient(service.url, service.config.jwtSecret);
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('counts down, opens, buys once through a cut connection, follows the order to committed and pays; a later tab sees sold out', async () => {
    const opensAt = new Date(Date.now() + OPENS_IN_MS).toISOString();
    const productId = await api.listProduct({
      name: 'Limited sneakers',
      stock: 1,
      perUserLimit: 1,
      maxPerOrder: 1,
      saleStartsAt: opensAt,
      requirePathToken: true,
    });
    const pageUrl = `${service.url}/sale/${productId}`;
    const context = await browser.newContext({ viewport: { width: 900, height: 860 } });
    const { page, violations } = await watchedPage(context);

    // the first order request reaches the service, and its answer is lost on the way back: the connection is cut
    const orderRequests: string[] = [];
    let cut = false;
    await page.route('**/api/v1/seckill/orders', async (route) => {
      orderRequests.push(route.request().headers()['idempotency-key'] ?? '');
      if (cut) return route.continue();
      cut = true;
      await route.fetch();
      return route.abort('connectionreset');
    });

    await page.goto(pageUrl);
    // the demo's sign-in: a buyer's token from the service itself (development secret, this machine only)
    await page.waitForSelector('#dev-login:not([hidden])');
    await page.fill('#user-id', 'alice');
    await page.click('#dev-login button');
    await page.waitForSelector('#who:has-text("signed in as alice")');

    // before the window opens: a countdown, and the button is not live
    expect(await phaseOf(page)).toBe('upcoming');
    expect(await page.textContent('#window-label')).toBe('opens in');
    expect(await page.textContent('#countdown')).toMatch(/^0:0[0-9]$/);
    expect(await page.isDisabled('#buy')).toBe(true);
    expect(Date.now()).toBeLessThan(Date.parse(opensAt));

    // it becomes live when the window opens, and not before
    await page.waitForSelector('#buy:not([disabled])', { timeout: OPENS_IN_MS + 5_000 });
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(opensAt) - 1_000);
    expect(await phaseOf(page)).toBe('open');

    await page.click('#buy');
    // the order is followed live through its event stream, to committed
    await page.waitForSelector('#order-status[data-status="COMMITTED"]', { timeout: 20_000 });
    const orderId = (await page.textContent('#order-id')) ?? '';

    // asked twice with one key: one order, the one the page shows
    expect(orderRequests).toHaveLength(2);
    expect(new Set(orderRequests).size).toBe(1);
    const orders = [...memoryDatabaseOf(service).orders.values()].filter((o) => o.productId === productId);
    expect(orders.map((o) => [o.orderId, o.userId])).toEqual([[orderId, 'alice']]);

    await page.click('#pay');
    await page.waitForSelector('#order-status[data-status="PAID"]');
    expect(memoryDatabaseOf(service).orders.get(orderId)?.status).toBe('PAID');
    await page.waitForSelector('body[data-phase="sold-out"]');
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    // no token, no secret in the page's address at any point
    expect(page.url()).toBe(pageUrl);

    // another buyer's tab, after the sellout: sold out, nothing to buy
    const second = await context.browser()!.newContext({ viewport: { width: 900, height: 860 } });
    const later = await second.newPage();
    await later.goto(pageUrl);
    await later.waitForSelector('body[data-phase="sold-out"]');
    expect(await later.textContent('#stock-left')).toBe('0');
    expect(await later.isDisabled('#buy')).toBe(true);
    await second.close();

    expect(violations).toEqual([]);
    await context.close();
  });

  it('shows a released order with its reason when the buyer cancels', async () => {
    const productId = await api.listProduct({ name: 'Cancelled', stock: 5, perUserLimit: 1, maxPerOrder: 1 });
    const context = await browser.newContext();
    const page = await context.newPage();
    // a token from an identity provider, pasted in (the service's secret signs it here)
    await page.goto(`${service.url}/sale/${productId}`);
    await page.fill('#token', await api.token('bob'));
    await page.click('#token-form button');
    await page.waitForSelector('#buy:not([disabled])');
    await page.click('#buy');
    await page.waitForSelector('#order-status[data-status="COMMITTED"]', { timeout: 20_000 });
    await page.click('#cancel');
    await page.waitForSelector('#order-status[data-status="RELEASED"]');
    expect(await page.textContent('#order-reason')).toBe('(you cancelled it)');
    // a reload follows the same order on, and still knows the buyer (for this tab only)
    await page.reload();
    await page.waitForSelector('#order-status[data-status="RELEASED"]');
    expect(await page.textContent('#who')).toBe('signed in as bob');
    await context.close();
  });

  it('carries the security headers on the page and its files, and a bad product id is a 404 problem', async () => {
    for (const path of ['/sale/1', '/sale/sale.js', '/sale/sale.css']) {
      const answer = await fetch(`${service.url}${path}`);
      expect({ path, status: answer.status }).toEqual({ path, status: 200 });
      const policy = answer.headers.get('content-security-policy') ?? '';
      expect(policy).toContain("default-src 'none'");
      expect(policy).toContain("script-src 'self'");
      expect(policy).toContain("frame-ancestors 'none'");
      expect(policy).not.toContain('unsafe-inline');
      expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
      expect(answer.headers.get('x-frame-options')).toBe('DENY');
      expect(answer.headers.get('referrer-policy')).toBe('no-referrer');
    }
    const unknown = await fetch(`${service.url}/sale/not-a-product`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toContain('application/problem+json');
  });

  it('hands out demo tokens only with the development secret', async () => {
    const login = await fetch(`${service.url}/api/v1/dev/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 'carol' }),
    });
    expect(login.status).toBe(201);
    const { token } = (await login.json()) as { token: string };
    const mine = await api.request('GET', '/api/v1/orders', { token });
    expect(mine.status).toBe(200);
    const badName = await fetch(`${service.url}/api/v1/dev/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 'bad user!' }),
    });
    expect(badName.status).toBe(400);

    const deployed = await startMemoryService({
      SECKILL_JWT_SECRET: 'a-secret-of-its-own-a-secret-of-its-own-0123',
    });
    try {
      const refused = await fetch(`${deployed.url}/api/v1/dev/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ userId: 'carol' }),
      });
      expect(refused.status).toBe(404);
    } finally {
      await deployed.close();
    }
  });
});
