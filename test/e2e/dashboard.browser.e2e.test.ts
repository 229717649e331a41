import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { MemoryInstanceRegistry } from '../../src/adapters/memory/memory-instance-registry.js';
import { SystemClock } from '../../src/adapters/system/system-clock.js';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { runSimulation } from '../../src/client/simulate.js';
import { KillableRegistry } from '../support/app-doubles.js';
import { eventually } from '../support/contract-helpers.js';
import {
  instanceStatusesOn,
  launchChromium,
  openDashboard,
  watchedPage,
} from '../support/dashboard-browser.js';
import { ApiClient, startMemoryService } from '../support/e2e-service.js';
import { drained, memoryDatabaseOf } from '../support/drained.js';

const SCREENSHOT = fileURLToPath(new URL('../../docs/dashboard.png', import.meta.url));

const CHARTS = ['chart-answers', 'chart-failed', 'chart-stock', 'chart-lag', 'chart-instances'];
/** the colours of the page's lines (src/adapters/http/dashboard/dashboard.js) */
const ACCEPTED = [0x1c, 0x7a, 0x3e] as const;
const REJECTED = [0xc7, 0x77, 0x00] as const;
const DOWN = [0xb3, 0x26, 0x1e] as const;

/** Points each chart holds, as the page notes on it. */
const chartPoints = (page: Page): Promise<number[]> =>
  Promise.all(CHARTS.map(async (id) => Number(await page.getAttribute(`#${id}`, 'data-points'))));

/**
 * How many pixel rows of a chart's canvas the line of one colour covers: a line flat at zero covers two or
 * three, a line that rose and fell many more. Read from what the canvas shows, as the operator sees it.
 */
const rowsInked = (page: Page, chartId: string, [red, green, blue]: readonly number[]): Promise<number> =>
  page.evaluate(`(() => {
    const canvas = document.querySelector('#${chartId} canvas');
    const { data, width } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const rows = new Set();
    for (let i = 0; i < data.length; i += 4) {
      const near = Math.abs(data[i] - ${red}) + Math.abs(data[i + 1] - ${green}) + Math.abs(data[i + 2] - ${blue}) < 60;
      if (near && data[i + 3] > 200) rows.add(Math.floor(i / 4 / width));
    }
    return rows.size;
  })()`);

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
  let context: BrowserContext;
  let page: Page;
  let violations: string[];

  beforeAll(async () => {
    service = await startMemoryService({ SECKILL_RATE_LIMIT_POINTS: '100000' });
    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1200, height: 820 } });
    ({ page, violations } = await watchedPage(context));
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
      // the page shows the last whole second's answers, polled once a second: a flood that lasts a few seconds
      // (16,000 clicks) is seen by several polls while it runs, however fast this machine answers it
      clicks: 8,
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
    // simulate sold through the sale path: the page says the product takes orders with a path token
    expect(
      await page.locator(`tr[data-product="${report.productId}"] td[data-field="salePath"]`).textContent(),
    ).toBe('token');

    // the process that served the sale is the one instance, up
    expect(await instanceStatusesOn(page)).toEqual([{ role: 'all', pid: process.pid, status: 'up' }]);
    // the charts kept a point per poll, and the answers' lines rose with the flood and fell after it
    expect(Math.min(...(await chartPoints(page)))).toBeGreaterThanOrEqual(3);
    expect(await rowsInked(page, 'chart-answers', ACCEPTED)).toBeGreaterThan(10);
    expect(await rowsInked(page, 'chart-answers', REJECTED)).toBeGreaterThan(10);

    // its script and style (uPlot's too) are files of the service: the page's strict policy let it work, unviolated
    expect(violations).toEqual([]);
    mkdirSync(fileURLToPath(new URL('../../docs/', import.meta.url)), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });

  it('shows the API in Swagger UI at /docs, and tries a call from there, with no policy violation', async () => {
    const api = new ApiClient(service.url, service.config.jwtSecret);
    const productId = await api.listProduct({ name: 'Teapot', stock: 7 });
    const docs = await watchedPage(context);
    await docs.page.goto(`${service.url}/docs/`);
    await docs.page.waitForSelector('.swagger-ui .info .title:has-text("seckill")');
    const operation = docs.page.locator('#operations-default-getProduct');
    await operation.locator('.opblock-summary').click();
    await operation.getByRole('button', { name: 'Try it out' }).click();
    await operation.locator('input[placeholder="productId"]').fill(String(productId));
    await operation.getByRole('button', { name: 'Execute' }).click();
    const answer = operation.locator('.live-responses-table tr.response .response-col_status').first();
    await answer.waitFor();
    expect((await answer.textContent())?.trim()).toBe('200');
    expect(
      await operation
        .locator('.live-responses-table tr.response .response-col_description')
        .first()
        .textContent(),
    ).toContain('Teapot');
    expect(docs.violations).toEqual([]);
  });

  it('enforces the policy it sends: a script injected into the dashboard does not run, and is reported', async () => {
    const probe = await watchedPage(context);
    await probe.page.goto(`${service.url}/dashboard`);
    await probe.page.waitForSelector('#status');
    const ran = await probe.page.evaluate(`(() => {
      const injected = document.createElement('script');
      injected.textContent = 'window.injectedRan = true';
      document.body.append(injected);
      return window.injectedRan === true;
    })()`);
    expect(ran).toBe(false);
    await eventually(() => expect(probe.violations.join('\n')).toContain('script-src'), 5_000, 50);
  });
});

describe('a deployment watched in the browser', () => {
  const BEAT_MS = 200;
  const env = { SECKILL_INSTANCE_BEAT_MS: String(BEAT_MS) };
  const shared = new MemoryInstanceRegistry(new SystemClock());
  const workerBeats = new KillableRegistry(shared);
  let apiProcess: SeckillService;
  let workerProcess: SeckillService;
  let screenshots: string;

  beforeAll(async () => {
    apiProcess = await startMemoryService(
      env,
      { instances: () => new KillableRegistry(shared) },
      { http: true, worker: false },
    );
    workerProcess = await startMemoryService(
      env,
      { instances: () => workerBeats },
      { http: false, worker: true },
    );
    screenshots = mkdtempSync(join(tmpdir(), 'seckill-dashboard-'));
  });

  afterAll(async () => {
    await apiProcess?.close();
    await workerProcess?.close();
    rmSync(screenshots, { recursive: true, force: true });
  });

  it('shows every instance up, then a killed one red and down, with the instance count dropping', async () => {
    const api = new ApiClient(apiProcess.url, apiProcess.config.jwtSecret);
    const dashboard = await openDashboard(`${apiProcess.url}/`, await api.token('ops', 'admin'));
    try {
      await eventually(
        async () =>
          expect(await dashboard.instanceStatuses()).toEqual([
            { role: 'api', pid: process.pid, status: 'up' },
            { role: 'worker', pid: process.pid, status: 'up' },
          ]),
        10_000,
        100,
      );
      expect(await dashboard.page.textContent('#instances-up')).toBe('2 / 2');

      workerBeats.killed = true;
      await eventually(
        async () => expect((await dashboard.instanceStatuses()).map((i) => i.status)).toEqual(['up', 'down']),
        10_000,
        100,
      );
      // at a glance: the row turns red, the count of instances up drops and its tile turns red too
      const workerRow = `getComputedStyle(document.querySelector('#instances tr[data-role="worker"] td'))`;
      expect(await dashboard.page.evaluate(`${workerRow}.backgroundColor`)).toBe('rgb(251, 227, 225)');
      expect(await dashboard.page.textContent('#instances-up')).toBe('1 / 2');
      expect(await dashboard.page.getAttribute('#instances-tile', 'class')).toContain('alarm');
      await eventually(
        async () => expect(await rowsInked(dashboard.page, 'chart-instances', DOWN)).toBeGreaterThan(10),
        10_000,
        100,
      );

      const shot = join(screenshots, 'drill.png');
      await dashboard.screenshot(shot);
      expect(readFileSync(shot).subarray(1, 4).toString()).toBe('PNG');
    } finally {
      await dashboard.close();
    }
  });
});
