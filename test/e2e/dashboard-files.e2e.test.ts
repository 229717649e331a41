import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DASHBOARD_FILES, DASHBOARD_PAGE_FILE } from '../../src/adapters/http/dashboard-files.js';
import type { SeckillService } from '../../src/infrastructure/service.js';
import { startMemoryService } from '../support/e2e-service.js';
import { listeningUrl, startService, type WorkerProcess } from '../support/processes.js';

/** Each URL of the dashboard, the file it is, and the type it must be served as. */
const SERVED: ReadonlyArray<readonly [url: string, file: string, type: string]> = [
  ['/dashboard', DASHBOARD_PAGE_FILE, 'text/html; charset=utf-8'],
  ['/dashboard/dashboard.js', DASHBOARD_FILES.get('/dashboard.js')!, 'text/javascript; charset=utf-8'],
  ['/dashboard/dashboard.css', DASHBOARD_FILES.get('/dashboard.css')!, 'text/css; charset=utf-8'],
  [
    '/dashboard/uPlot.iife.min.js',
    DASHBOARD_FILES.get('/uPlot.iife.min.js')!,
    'text/javascript; charset=utf-8',
  ],
  ['/dashboard/uPlot.min.css', DASHBOARD_FILES.get('/uPlot.min.css')!, 'text/css; charset=utf-8'],
];

/** The dashboard's policy, directive by directive. */
const directivesOf = (policy: string | null): Record<string, string[]> =>
  Object.fromEntries(
    (policy ?? '').split(';').map((d) => {
      const [name = '', ...values] = d.trim().split(/\s+/);
      return [name, values];
    }),
  );

const DASHBOARD_POLICY = {
  'default-src': ["'none'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'connect-src': ["'self'"],
  'img-src': ["'self'"],
  'base-uri': ["'none'"],
  'form-action': ["'self'"],
  'frame-ancestors': ["'none'"],
};

/** Every URL of the dashboard answers its file as it lies in src, with the page's policy and its own type. */
const expectServed = async (baseUrl: string): Promise<void> => {
  for (const [url, file, type] of SERVED) {
    const answer = await fetch(`${baseUrl}${url}`);
    expect({
      url,
      status: answer.status,
      type: answer.headers.get('content-type'),
      policy: directivesOf(answer.headers.get('content-security-policy')),
      nosniff: answer.headers.get('x-content-type-options'),
      cache: answer.headers.get('cache-control'),
      etag: answer.headers.get('etag'),
    }).toEqual({
      url,
      status: 200,
      type,
      policy: DASHBOARD_POLICY,
      nosniff: 'nosniff',
      cache: 'no-cache',
      etag: expect.stringMatching(/^"[\w-]+"$/),
    });
    expect(Buffer.from(await answer.arrayBuffer()).equals(readFileSync(file))).toBe(true);
  }
};

describe("the dashboard's static files", () => {
  let service: SeckillService;

  beforeAll(async () => {
    service = await startMemoryService();
  });

  afterAll(async () => {
    await service.close();
  });

  it('serves the page and each of its files with the policy, its content type and its bytes', async () => {
    await expectServed(service.url);
  });

  it('lets the browser keep them: a matching If-None-Match is a 304 with no body, a HEAD has no body', async () => {
    for (const [url] of SERVED) {
      const first = await fetch(`${service.url}${url}`);
      const etag = first.headers.get('etag') ?? '';
      await first.arrayBuffer();
      // as a browser asks again for what it keeps (fetch would add `cache-control: no-cache`, asking for a reload)
      const revalidate = (tag: string) =>
        fetch(`${service.url}${url}`, { headers: { 'if-none-match': tag, 'cache-control': 'max-age=0' } });
      const again = await revalidate(etag);
      expect({
        url,
        status: again.status,
        body: await again.text(),
        etag: again.headers.get('etag'),
      }).toEqual({
        url,
        status: 304,
        body: '',
        etag,
      });
      expect(directivesOf(again.headers.get('content-security-policy'))).toEqual(DASHBOARD_POLICY);
      const changed = await revalidate('"another"');
      expect(changed.status).toBe(200);
      await changed.arrayBuffer();
      const head = await fetch(`${service.url}${url}`, { method: 'HEAD' });
      expect([head.status, head.headers.get('content-type'), await head.text()]).toEqual([
        200,
        SERVED.find(([u]) => u === url)![2],
        '',
      ]);
    }
  });

  it('serves nothing else from the folder, nor from beside it', async () => {
    for (const path of [
      '/dashboard/index.html',
      '/dashboard/dashboard.js.map',
      '/dashboard/uPlot.esm.js',
      '/dashboard/%2e%2e/dashboard-files.ts',
      '/dashboard/..%2fdashboard-files.ts',
      '/dashboard/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fpackage.json',
    ]) {
      const answer = await fetch(`${service.url}${path}`);
      expect({ path, status: answer.status, type: answer.headers.get('content-type') }).toEqual({
        path,
        status: 404,
        type: expect.stringContaining('application/problem+json'),
      });
      await answer.arrayBuffer();
    }
    const posted = await fetch(`${service.url}/dashboard/dashboard.js`, { method: 'POST' });
    expect(posted.status).toBe(404);
    await posted.arrayBuffer();
  });
});

describe("the built service's dashboard (dist/, as npm start and the seckill command run it)", () => {
  let proc: WorkerProcess;
  let url: string;

  beforeAll(async () => {
    proc = startService('all', { PORT: '0', SECKILL_PROFILE: 'memory', SECKILL_DEMO_PRODUCT: 'false' });
    url = await listeningUrl(proc);
  });

  afterAll(async () => {
    await proc.stop();
  });

  it('serves the same files as the sources, copied into dist by npm run build', async () => {
    await expectServed(url);
  });
});
