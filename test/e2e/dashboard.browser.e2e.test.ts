import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { type Browser, chromium, type Page } from 'playwright-core';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { runSimulation } from '../../src/client/simulate.js';
import { eventually } from '../support/contract-helpers.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';
import { drained, memoryDatabaseOf } from '../support/drained.js';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const SCREENSHOT = fileURLToPath(new URL('../../docs/dashboard.png', import.meta.url));

/** The number shown in a cell of the product's row, or null while it shows none. */
const shown = async (page: Page, productId: number, field: string): Promise<number | null> => {
  const cell = page.locator(`tr[data-product="${productId}"] td[data-field="${field}"]`);
  if ((await cell.count()) === 0) return null;
  const value = Number(((await cell.textContent()) ?? '').replaceAll(',', ''));
  return Number.isNaN(value) ? null : value;
};

describe('the live dashboard in a browser', () => {
  let service: SeckillService;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    service = await startMemoryService({ SECKILL_RATE_LIMIT_POINTS: '100000' });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    page = await browser.newPage({ viewport: { width: 1200, height: 820 } });
  });

  afterAll(async () => {
    await browser?.close();
    await service?.close();
  });

  it('shows the sale as it runs, and the sold figure it ends with is the real one', async () => {
    const api = new ApiClient(service.url, service.config.jwtSecret);
    const admin = await api.token('ops', 'admin');
    await page.goto(`${service.url}/dashboard#token=${admin}`);
    await page.waitForSelector('#status:not(.error)');
    // the token leaves the address bar once read
    expect(page.url()).toBe(`${service.url}/dashboard`);

    const rejectedSeen: number[] = [];
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const text = await page.textContent('#rejected');
        rejectedSeen.push(Number((text ?? '').replaceAll(',', '')) || 0);
        await page.waitForTimeout(250);
      }
    })();
    const report = await runSimulation({
      url: service.url,
      secret: service.config.jwtSecret,
      buyers: 2_000,
      stock: 60,
      perUserLimit: 1,
      clicks: 3,
      connections: 16,
      quiet: true,
    });
    watching = false;
    await watch;
    expect(report.sold).toBe(60);
    // the page counted rejections per second while the flood ran
    expect(Math.max(...rejectedSeen)).toBeGreaterThan(0);

    await drained(service);
    const db = memoryDatabaseOf(service);
    const realSold = [...db.orders.values()]
      .filter((o) => o.productId === report.productId && (o.status === 'COMMITTED' || o.status === 'PAID'))
      .reduce((n, o) => n + o.quantity, 0);
    expect(realSold).toBe(report.sold);
    // the page polls once a second: wait for it to catch up with the end of the sale
    await eventually(
      async () => expect(await shown(page, report.productId, 'sold')).toBe(realSold),
      10_000,
      200,
    );
    expect(await shown(page, report.productId, 'sold')).toBe(realSold);
    expect(await shown(page, report.productId, 'gateStock')).toBe(0);
    expect(await shown(page, report.productId, 'mysqlStock')).toBe(0);
    expect(await shown(page, report.productId, 'reserved')).toBe(0);

    mkdirSync(fileURLToPath(new URL('../../docs/', import.meta.url)), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });
});
