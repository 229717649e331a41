/**
 * The live sale dashboard: one static page that polls `GET /api/v1/admin/dashboard` once a second with the
 * admin token the operator pastes in (kept for the browser tab only, in sessionStorage; `#token=…` in the
 * address fills it in). No assets from elsewhere: it works on a machine with no internet access. Its style and
 * script are files of their own (`/dashboard/dashboard.css`, `/dashboard/dashboard.js`, and uPlot's two files,
 * served from the package), so that its Content Security Policy allows no inline code: a script injected into
 * the page would not run, and could not read the admin token. Every URL in it is relative to the page, so it
 * works the same behind a load balancer that serves the service under a path of its own.
 *
 * Each poll may be answered by another API process: the figures come from the shared stores and the instance
 * registry, so any of them answers the same. The page keeps what it saw since it was opened (the last 10
 * minutes) for its charts; the answer rates are the instances' own, each from its last two beats, so that an
 * instance that dies stops adding to them instead of taking its counts away.
 */
export const DASHBOARD_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>seckill · live sale</title>
<link rel="stylesheet" href="dashboard/uPlot.min.css">
<link rel="stylesheet" href="dashboard/dashboard.css">
</head>
<body>
<h1>seckill · live sale</h1>
<div class="sub">Every figure is read again each second from <code>GET /api/v1/admin/dashboard</code>; rates are those of every instance, from their beats. <span id="status">waiting for an admin token</span></div>
<form id="auth"><input id="token" type="password" placeholder="admin bearer token (npx seckill token --user ops --admin)" autocomplete="off"><button>Watch</button></form>
<div class="tiles">
  <div class="tile"><div class="label">accepted / s</div><div class="value" id="accepted">–</div></div>
  <div class="tile"><div class="label">rejected / s</div><div class="value" id="rejected">–</div></div>
  <div class="tile"><div class="label">5xx / s</div><div class="value" id="failed">–</div></div>
  <div class="tile" id="instances-tile"><div class="label">instances up</div><div class="value" id="instances-up">–</div></div>
  <div class="tile"><div class="label">sold (all products)</div><div class="value" id="sold-total">–</div></div>
  <div class="tile"><div class="label">outbox pending</div><div class="value" id="outbox-pending">–</div></div>
  <div class="tile"><div class="label">outbox dead</div><div class="value" id="outbox-dead">–</div></div>
  <div class="tile"><div class="label">consumer lag</div><div class="value" id="lag-total">–</div></div>
</div>
<h2>Instances</h2>
<table class="instances">
  <thead><tr><th>role</th><th>instance</th><th>host</th><th>pid</th><th>status</th><th>ready</th><th>accepted</th><th>rejected</th><th>5xx</th><th>committed</th><th>released</th></tr></thead>
  <tbody id="instances"><tr><td colspan="11">no data yet</td></tr></tbody>
</table>
<h2>Since this page was opened</h2>
<div class="charts">
  <figure class="chart"><figcaption>order answers / s, all instances (rejected: right axis)</figcaption><div class="plot" id="chart-answers"></div></figure>
  <figure class="chart"><figcaption>5xx answers / s, all instances</figcaption><div class="plot" id="chart-failed"></div></figure>
  <figure class="chart"><figcaption>stock, all products</figcaption><div class="plot" id="chart-stock"></div></figure>
  <figure class="chart"><figcaption>consumer lag, by group</figcaption><div class="plot" id="chart-lag"></div></figure>
  <figure class="chart"><figcaption>instances, by status</figcaption><div class="plot" id="chart-instances"></div></figure>
</div>
<h2>Products</h2>
<table>
  <thead><tr><th>product</th><th>name</th><th title="orders carry a single-use token from POST /api/v1/seckill/products/{id}/path">sale path</th><th>gate stock</th><th>MySQL stock</th><th>sold</th><th>reserved, undecided</th><th>released</th></tr></thead>
  <tbody id="products"><tr><td colspan="8">no data yet</td></tr></tbody>
</table>
<h2>Outbox rows by status</h2>
<table><tbody id="outbox"></tbody></table>
<h2>Consumer lag</h2>
<table><tbody id="lag"></tbody></table>
<script src="dashboard/uPlot.iife.min.js"></script>
<script src="dashboard/dashboard.js"></script>
</body>
</html>
`;

export const DASHBOARD_STYLE = `:root { font-family: system-ui, sans-serif; color: #1d2330; background: #f5f6f8; }
body { margin: 0 auto; max-width: 1200px; padding: 16px 24px; }
h1 { font-size: 20px; margin: 0 0 4px; }
.sub { color: #5b6475; font-size: 13px; margin-bottom: 16px; }
form { display: flex; gap: 8px; margin-bottom: 16px; }
input { flex: 1; padding: 6px 8px; font: inherit; border: 1px solid #c5cad3; border-radius: 4px; }
button { padding: 6px 14px; font: inherit; border: 0; border-radius: 4px; background: #2f5bd3; color: #fff; }
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(130px, 1fr)); gap: 12px; margin-bottom: 16px; }
.tile { background: #fff; border-radius: 6px; padding: 10px 14px; box-shadow: 0 1px 2px #0001; }
.tile .label { color: #5b6475; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.tile .value { font-size: 26px; font-variant-numeric: tabular-nums; }
.tile.alarm { background: #fbe3e1; }
.tile.alarm .value { color: #b3261e; }
table { width: 100%; border-collapse: collapse; background: #fff; border-radius: 6px; box-shadow: 0 1px 2px #0001; }
th, td { padding: 8px 10px; text-align: right; border-bottom: 1px solid #eceef2; font-variant-numeric: tabular-nums; }
th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
table.instances th:nth-child(-n+6), table.instances td:nth-child(-n+6) { text-align: left; }
th { font-size: 12px; color: #5b6475; text-transform: uppercase; letter-spacing: .04em; }
td.sold { font-weight: 600; color: #1c7a3e; }
tr.instance td[data-field="status"] { font-weight: 600; color: #1c7a3e; }
tr.instance.degraded td { background: #fff3d6; }
tr.instance.degraded td[data-field="status"] { color: #8a5300; }
tr.instance.down td { background: #fbe3e1; color: #8c1d18; }
tr.instance.down td[data-field="status"] { color: #b3261e; }
.failing { color: #b3261e; font-weight: 600; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 12px; }
figure.chart { margin: 0; min-width: 0; background: #fff; border-radius: 6px; padding: 8px 10px; box-shadow: 0 1px 2px #0001; }
figure.chart figcaption { color: #5b6475; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; margin-bottom: 4px; }
.plot { min-height: 200px; }
h2 { font-size: 15px; margin: 20px 0 8px; }
#status { font-size: 13px; }
#status.error { color: #b3261e; }
`;

export const DASHBOARD_SCRIPT = `(() => {
  const $ = (id) => document.getElementById(id);
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromHash) { sessionStorage.setItem('seckill-admin-token', fromHash); history.replaceState(null, '', location.pathname); }
  let token = sessionStorage.getItem('seckill-admin-token') || '';
  $('token').value = token;
  $('auth').addEventListener('submit', (e) => {
    e.preventDefault();
    token = $('token').value.trim();
    sessionStorage.setItem('seckill-admin-token', token);
    tick();
  });
  const fmt = (n) => (n === null || n === undefined ? '–' : Number(n).toLocaleString('en', { maximumFractionDigits: 0 }));
  const cell = (text, attrs) => { const td = document.createElement('td'); td.textContent = text; for (const [k, v] of Object.entries(attrs || {})) td.setAttribute(k, v); return td; };
  const status = (text, error) => { $('status').textContent = text; $('status').className = error ? 'error' : ''; };
  const sum = (xs, pick) => xs.reduce((n, x) => n + (pick(x) || 0), 0);
  const placeholder = (colspan, text) => { const tr = document.createElement('tr'); tr.append(cell(text, { colspan: String(colspan) })); return tr; };

  // each instance's answer rates, from its last two beats (counts are cumulative per instance): an instance
  // that dies stops adding to the sum, it never takes its counts away from it
  const RATES = ['accepted', 'rejected', 'failed'];
  const beats = new Map();
  const clusterRates = (instances) => {
    const total = { accepted: 0, rejected: 0, failed: 0 };
    for (const i of instances) {
      const seenAt = Date.parse(i.lastSeenAt);
      const before = beats.get(i.instanceId);
      if (!before || seenAt > before.seenAt) {
        const seconds = before ? (seenAt - before.seenAt) / 1000 : 0;
        const rates = seconds > 0 ? Object.fromEntries(RATES.map((k) => [k, Math.max(0, i.counts[k] - before.counts[k]) / seconds])) : null;
        beats.set(i.instanceId, { seenAt, counts: i.counts, rates });
      }
      const rates = beats.get(i.instanceId).rates;
      // a beat late by more than one interval: the instance is not answering anything now
      if (rates && i.lastSeenAgoMs < 2 * i.beatEveryMs) for (const k of RATES) total[k] += rates[k];
    }
    const listed = new Set(instances.map((i) => i.instanceId));
    for (const id of beats.keys()) if (!listed.has(id)) beats.delete(id);
    return total;
  };

  // one point per poll, for the last 10 minutes
  const KEEP_SECONDS = 600;
  const points = [];
  const record = (f, rates) => {
    const t = Date.now() / 1000;
    const byStatus = { up: 0, degraded: 0, down: 0 };
    for (const i of f.instances) byStatus[i.status] += 1;
    points.push({
      t,
      answers: { accepted: rates.accepted, rejected: rates.rejected },
      failed: { '5xx': rates.failed },
      stock: { 'gate stock': sum(f.products, (p) => p.gateStock), 'MySQL stock': sum(f.products, (p) => p.mysqlStock) },
      lag: Object.fromEntries(f.consumerLag.map((g) => [g.groupId, g.lag])),
      instances: byStatus,
    });
    while (points.length && points[0].t < t - KEEP_SECONDS) points.shift();
  };

  const COLORS = { accepted: '#1c7a3e', rejected: '#c77700', '5xx': '#b3261e', 'gate stock': '#2f5bd3', 'MySQL stock': '#7b3fb5', up: '#1c7a3e', degraded: '#c77700', down: '#b3261e' };
  const PALETTE = ['#2f5bd3', '#0f8a8a', '#7b3fb5', '#c2185b', '#6d4c41'];
  const CHARTS = [
    ['chart-answers', (p) => p.answers],
    ['chart-failed', (p) => p.failed],
    ['chart-stock', (p) => p.stock],
    ['chart-lag', (p) => p.lag],
    ['chart-instances', (p) => p.instances],
  ];
  // rejections outnumber acceptances by far in a flash sale: on one axis the accepted line would lie flat
  const OWN_AXIS = ['rejected'];
  const plots = new Map();
  const HEIGHT = 170;
  const widthOf = (el) => Math.max(280, el.clientWidth);
  const drawChart = ([id, pick]) => {
    const el = $(id);
    const labels = [];
    for (const p of points) for (const label of Object.keys(pick(p))) if (!labels.includes(label)) labels.push(label);
    const data = [points.map((p) => p.t), ...labels.map((label) => points.map((p) => pick(p)[label] ?? null))];
    let shown = plots.get(id);
    // a series that appears (a consumer group, say) makes the chart anew with one more line
    if (!shown || shown.labels.join('|') !== labels.join('|')) {
      if (shown) shown.plot.destroy();
      const stroke = (label, n) => COLORS[label] || PALETTE[n % PALETTE.length];
      const series = [{}, ...labels.map((label, n) => ({ label, scale: OWN_AXIS.includes(label) ? label : 'y', stroke: stroke(label, n), width: 2, points: { show: false } }))];
      const axes = [{}, { size: 60 }, ...labels.filter((label) => OWN_AXIS.includes(label)).map((label) => ({ scale: label, side: 1, size: 60, stroke: COLORS[label], grid: { show: false } }))];
      shown = { labels, plot: new uPlot({ width: widthOf(el), height: HEIGHT, scales: { x: { time: true } }, axes, legend: { live: false }, series }, data, el) };
      plots.set(id, shown);
    } else {
      shown.plot.setData(data);
    }
    el.dataset.points = String(points.length);
  };
  addEventListener('resize', () => { for (const [id, shown] of plots) shown.plot.setSize({ width: widthOf($(id)), height: HEIGHT }); });

  const ago = (ms) => (ms < 1000 ? 'just now' : ms < 60000 ? (ms / 1000).toFixed(1) + ' s ago' : Math.round(ms / 60000) + ' min ago');
  const readiness = (ready) => {
    const td = cell('', { 'data-field': 'ready' });
    const names = Object.keys(ready);
    if (!names.length) td.textContent = 'in process';
    names.forEach((name, n) => {
      const span = document.createElement('span');
      span.textContent = (n ? ' · ' : '') + name + ' ' + ready[name];
      if (ready[name] !== 'ok') span.className = 'failing';
      td.append(span);
    });
    return td;
  };
  const instanceRow = (i) => {
    const tr = document.createElement('tr');
    tr.className = 'instance ' + i.status;
    Object.assign(tr.dataset, { instance: i.instanceId, role: i.role, pid: String(i.pid), status: i.status });
    tr.append(
      cell(i.role), cell(i.instanceId), cell(i.host), cell(String(i.pid)),
      cell(i.status + ' · ' + ago(i.lastSeenAgoMs), { 'data-field': 'status', title: 'last beat ' + i.lastSeenAt + ', every ' + i.beatEveryMs + ' ms' }),
      readiness(i.ready),
      ...['accepted', 'rejected', 'failed', 'committed', 'released'].map((k) => cell(fmt(i.counts[k]), { 'data-field': k })),
    );
    return tr;
  };

  const renderInstances = (f, rates) => {
    $('accepted').textContent = fmt(rates.accepted);
    $('rejected').textContent = fmt(rates.rejected);
    $('failed').textContent = fmt(rates.failed);
    const up = f.instances.filter((i) => i.status !== 'down').length;
    $('instances-up').textContent = up + ' / ' + f.instances.length;
    $('instances-tile').classList.toggle('alarm', up < f.instances.length);
    $('instances').replaceChildren(...(f.instances.length ? f.instances.map(instanceRow) : [placeholder(11, 'no instance has beaten yet')]));
  };
  const productRow = (p) => {
    const tr = document.createElement('tr');
    tr.dataset.product = String(p.productId);
    const released = Object.entries(p.released).map(([r, n]) => r + ' ' + fmt(n)).join(', ') || '0';
    tr.append(
      cell(String(p.productId)), cell(p.name),
      cell(p.requirePathToken ? 'token' : 'open', { 'data-field': 'salePath' }),
      cell(fmt(p.gateStock), { 'data-field': 'gateStock' }),
      cell(fmt(p.mysqlStock), { 'data-field': 'mysqlStock' }),
      cell(fmt(p.sold), { 'data-field': 'sold', class: 'sold' }),
      cell(fmt(p.reserved), { 'data-field': 'reserved' }),
      cell(released, { 'data-field': 'released' }),
    );
    return tr;
  };
  const renderSale = (f) => {
    $('sold-total').textContent = fmt(sum(f.products, (p) => p.sold));
    $('outbox-pending').textContent = fmt(f.outbox.pending + f.outbox.failed);
    $('outbox-dead').textContent = fmt(f.outbox.dead);
    $('lag-total').textContent = fmt(sum(f.consumerLag, (g) => g.lag));
    $('products').replaceChildren(...(f.products.length ? f.products.map(productRow) : [placeholder(8, 'no products listed')]));
    $('outbox').replaceChildren(...Object.entries(f.outbox).map(([s, n]) => { const tr = document.createElement('tr'); tr.append(cell(s), cell(fmt(n), { 'data-outbox': s })); return tr; }));
    $('lag').replaceChildren(...f.consumerLag.map((g) => { const tr = document.createElement('tr'); tr.append(cell(g.groupId + ' ← ' + g.topic), cell(fmt(g.lag), { 'data-lag': g.groupId })); return tr; }));
  };
  const render = (f) => {
    const rates = clusterRates(f.instances);
    record(f, rates);
    renderInstances(f, rates);
    renderSale(f);
    CHARTS.forEach(drawChart);
    status('updated ' + new Date(f.at).toLocaleTimeString() + ', answered by ' + f.rates.instance, false);
    document.body.dataset.updatedAt = f.at;
  };
  let busy = false;
  const tick = async () => {
    if (!token || busy) return;
    busy = true;
    try {
      const res = await fetch('api/v1/admin/dashboard', { headers: { authorization: 'Bearer ' + token }, cache: 'no-store' });
      const body = await res.json();
      if (res.ok) render(body); else status(res.status + ' ' + (body.code || '') + ': ' + (body.detail || ''), true);
    } catch (e) {
      status('no answer: ' + e, true);
    } finally {
      busy = false;
    }
  };
  setInterval(tick, 1000);
  tick();
})();
`;
