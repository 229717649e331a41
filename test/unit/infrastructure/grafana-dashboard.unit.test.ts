import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { PrometheusMetrics } from '../../../src/infrastructure/metrics.js';

// docs/grafana/seckill.json is imported by hand into Grafana: a panel naming a metric the service does not
// expose draws nothing, silently. This test keeps the dashboard and src/infrastructure/metrics.ts in step.
const repoRoot = path.resolve(import.meta.dirname, '..', '..', '..');
const dashboardFile = path.join(repoRoot, 'docs', 'grafana', 'seckill.json');

type Target = { expr?: string; datasource?: { uid?: string } };
type Panel = { id?: number; type?: string; title?: string; targets?: Target[]; panels?: Panel[] };
type Variable = { name?: string; query?: string | { query?: string }; definition?: string };
type Dashboard = {
  uid?: string;
  title?: string;
  schemaVersion?: number;
  refresh?: string;
  time?: { from?: string; to?: string };
  __inputs?: Array<{ name?: string; pluginId?: string }>;
  panels?: Panel[];
  templating?: { list?: Variable[] };
};

const METRIC = /seckill_[a-z0-9_]+/g;

const readDashboard = (): Dashboard => JSON.parse(readFileSync(dashboardFile, 'utf8')) as Dashboard;

/** Every panel, rows' nested panels included (a collapsed row keeps its panels inside it). */
const panelsOf = (panels: Panel[] = []): Panel[] => panels.flatMap((p) => [p, ...panelsOf(p.panels)]);

const targetsOf = (dashboard: Dashboard): Target[] =>
  panelsOf(dashboard.panels).flatMap((p) => p.targets ?? []);

const variableQueries = (dashboard: Dashboard): string[] =>
  (dashboard.templating?.list ?? []).flatMap((v) => [
    typeof v.query === 'string' ? v.query : (v.query?.query ?? ''),
    v.definition ?? '',
  ]);

const metricsIn = (expressions: string[]): string[] =>
  [...new Set(expressions.flatMap((expr) => expr.match(METRIC) ?? []))].sort();

/** The series names a fresh registry exposes: a histogram X also answers X_bucket, X_sum and X_count. */
const exposedNames = async (): Promise<Set<string>> => {
  const metrics = new PrometheusMetrics();
  const names = new Set<string>();
  for (const metric of await metrics.registry.getMetricsAsJSON()) {
    names.add(metric.name);
    if (String(metric.type) === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${metric.name}${suffix}`);
    if (String(metric.type) === 'summary')
      for (const suffix of ['_sum', '_count']) names.add(`${metric.name}${suffix}`);
  }
  return names;
};

describe('Grafana dashboard (docs/grafana/seckill.json)', () => {
  it('parses as an importable dashboard with a Prometheus data source input', () => {
    const dashboard = readDashboard();

    expect(dashboard.uid).toBe('seckill');
    expect(dashboard.title).toBe('seckill flash sale');
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.refresh).toBe('5s');
    expect(dashboard.time).toEqual({ from: 'now-30m', to: 'now' });
    expect(dashboard.__inputs).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'DS_PROMETHEUS', pluginId: 'prometheus' })]),
    );
  });

  it('has the panels operators need', () => {
    const titles = panelsOf(readDashboard().panels)
      .filter((p) => p.type !== 'row')
      .map((p) => (p.title ?? '').toLowerCase());
    const wanted = [
      'throughput',
      'order answers',
      'latency',
      'gate stock',
      'mysql stock',
      'consumer lag',
      'outbox',
      'drift',
      'released',
      'cpu',
      'event-loop',
    ];

    expect(wanted.filter((word) => !titles.some((title) => title.includes(word)))).toEqual([]);
  });

  it('gives every panel a unique id and every query the DS_PROMETHEUS input', () => {
    const dashboard = readDashboard();
    const ids = panelsOf(dashboard.panels).map((p) => p.id);
    const targets = targetsOf(dashboard);

    expect(new Set(ids).size).toBe(ids.length);
    expect(targets.length).toBeGreaterThan(0);
    expect(targets.filter((t) => !t.expr || t.datasource?.uid !== '${DS_PROMETHEUS}')).toEqual([]);
  });

  it('queries only metrics a fresh PrometheusMetrics registry exposes', async () => {
    const dashboard = readDashboard();
    const used = metricsIn([...targetsOf(dashboard).map((t) => t.expr ?? ''), ...variableQueries(dashboard)]);
    const exposed = await exposedNames();

    expect(used).toEqual(
      expect.arrayContaining([
        'seckill_http_requests_total',
        'seckill_http_request_duration_seconds_bucket',
        'seckill_gate_stock',
        'seckill_consumer_lag',
        'seckill_outbox_rows',
        'seckill_stock_drift',
      ]),
    );
    expect(used.filter((name) => !exposed.has(name))).toEqual([]);
  });
});
