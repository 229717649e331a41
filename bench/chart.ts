/**
 * A bar chart of the throughput figures of one `npm run bench` run, hand-written SVG (no chart library).
 * `npm run bench` calls it at the end; `node dist/bench/chart.js` redraws docs/benchmarks.svg from
 * bench/results/latest.json.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { Figures } from './lib/report.js';

type Bar = Readonly<{ label: string; value: number; color: string }>;

const COLORS = {
  baseline: '#9e9e9e',
  flood: '#1e88e5',
  naive: '#fb8c00',
  accept: '#43a047',
  hotRow: '#e53935',
  merged: '#8e24aa',
  oneByOne: '#ce93d8',
  service: '#6d4c41',
} as const;

const escapeXml = (text: string) =>
  text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;').replaceAll('"', '&quot;');

export const barsOf = (f: Figures): Bar[] => {
  const per = (label: string, values: Readonly<Record<string, number>>, color: string) =>
    f.connections.map((c) => ({ label: `${label}, ${c} conn.`, value: values[c] ?? 0, color }));
  return [
    ...per('bare express req/s', f.bareExpressRps, COLORS.baseline),
    ...per('flood (sold out) req/s', f.floodRps, COLORS.flood),
    ...per('naive DB req/s', f.naiveDbRps, COLORS.naive),
    ...per('accept: 202/s', f.acceptRps, COLORS.accept),
    {
      label: `hot row UPDATE/s, ${f.hotRowConnections} conn.`,
      value: f.hotRowUpdatesPerSec,
      color: COLORS.hotRow,
    },
    { label: 'consumer merged orders/s', value: f.consumerMergedPerSec, color: COLORS.merged },
    { label: 'consumer one-by-one orders/s', value: f.consumerOneByOnePerSec, color: COLORS.oneByOne },
    { label: 'service commit consumer orders/s', value: f.serviceCommitPerSec, color: COLORS.service },
  ];
};

/** Horizontal bars on a linear scale, each labelled with its value. */
export const renderChart = (f: Figures): string => {
  const bars = barsOf(f);
  const width = 860;
  const labelWidth = 250;
  const valueWidth = 70;
  const barHeight = 22;
  const gap = 8;
  const top = 56;
  const plot = width - labelWidth - valueWidth - 20;
  const max = Math.max(1, ...bars.map((b) => b.value));
  const height = top + bars.length * (barHeight + gap) + 40;
  const rows = bars.map((b, i) => {
    const y = top + i * (barHeight + gap);
    const w = Math.max(1, Math.round((b.value / max) * plot));
    return [
      `  <text x="${labelWidth - 8}" y="${y + barHeight / 2 + 4}" text-anchor="end">${escapeXml(b.label)}</text>`,
      `  <rect x="${labelWidth}" y="${y}" width="${w}" height="${barHeight}" fill="${b.color}"/>`,
      `  <text x="${labelWidth + w + 6}" y="${y + barHeight / 2 + 4}">${Math.round(b.value).toLocaleString('en')}</text>`,
    ].join('\n');
  });
  const title = `seckill flash-sale bench: operations per second (${f.startedAt.slice(0, 10)}, ${f.machine.cores} cores, Node ${f.machine.node})`;
  const note = `floodRatio ${f.connections.map((c) => `@${c} ${(f.floodRatio[c] ?? 0).toFixed(2)}`).join(', ')}; mergeSpeedup ${f.mergeSpeedup.toFixed(2)}; p99 flood @${f.headlineConnections} ${f.p99Ms} ms; oversold ${f.oversold}`;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="13">`,
    `  <rect width="${width}" height="${height}" fill="#ffffff"/>`,
    `  <text x="${width / 2}" y="24" text-anchor="middle" font-size="15" font-weight="bold">${escapeXml(title)}</text>`,
    `  <text x="${width / 2}" y="42" text-anchor="middle" fill="#555555">${escapeXml(note)}</text>`,
    `  <line x1="${labelWidth}" y1="${top - 4}" x2="${labelWidth}" y2="${height - 36}" stroke="#333333"/>`,
    ...rows,
    `  <text x="${width / 2}" y="${height - 12}" text-anchor="middle" fill="#555555">${escapeXml('measured by npm run bench in one run; see docs/benchmarks.md')}</text>`,
    '</svg>',
    '',
  ].join('\n');
};

export const writeChart = async (f: Figures, path: string): Promise<void> => {
  await writeFile(path, renderChart(f));
};

const runAsScript = process.argv[1]?.endsWith('chart.js') ?? false;
if (runAsScript) {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const figures = JSON.parse(await readFile(`${root}bench/results/latest.json`, 'utf8')) as Figures;
  await writeChart(figures, `${root}docs/benchmarks.svg`);
  process.stdout.write(`${root}docs/benchmarks.svg written from bench/results/latest.json\n`);
}
