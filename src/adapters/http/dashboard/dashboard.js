// The live sale dashboard's script (index.html loads it after uPlot's). Plain browser JavaScript, served as
// it is written: no build step, no module, nothing from another origin. It polls GET api/v1/admin/dashboard
// once a second with the admin token pasted into the page, kept in sessionStorage for the tab only (an
// address ending in #token=… fills it in and is then cleared from the address bar). Every URL is relative to
// the page. The page's policy (security-headers.ts, DASHBOARD_HEADERS) runs no inline code: keep it that way,
// with no inline handlers (onclick=…) and no eval; build the DOM with textContent, never innerHTML.
(() => {
  'use strict';

  const $ = (id) => document.getElementById(id);
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromHash) {
    sessionStorage.setItem('seckill-admin-token', fromHash);
    history.replaceState(null, '', location.pathname);
  }
  let token = sessionStorage.getItem('seckill-admin-token') || '';
  $('token').value = token;
  $('auth').addEventListener('submit', (e) => {
    e.preventDefault();
    token = $('token').value.trim();
    sessionStorage.setItem('seckill-admin-token', token);
    tick();
  });
  const fmt = (n) =>
    n === null || n === undefined ? '–' : Number(n).toLocaleString('en', { maximumFractionDigits: 0 });
  const cell = (text, attrs) => {
    const td = document.createElement('td');
    td.textContent = text;
    for (const [k, v] of Object.entries(attrs || {})) td.setAttribute(k, v);
    return td;
  };
  const status = (text, error) => {
    $('status').textContent = text;
    $('status').className = error ? 'error' : '';
  };
  const sum = (xs, pick) => xs.reduce((n, x) => n + (pick(x) || 0), 0);
  const placeholder = (colspan, text) => {
    const tr = document.createElement('tr');
    tr.append(cell(text, { colspan: String(colspan) }));
    return tr;
  };

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
        const rates =
          seconds > 0
            ? Object.fromEntries(RATES.map((k) => [k, Math.max(0, i.counts[k] - before.counts[k]) / seconds]))
            : null;
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
      stock: {
        'gate stock': sum(f.products, (p) => p.gateStock),
        'MySQL stock': sum(f.products, (p) => p.mysqlStock),
      },
      lag: Object.fromEntries(f.consumerLag.map((g) => [g.groupId, g.lag])),
      instances: byStatus,
    });
    while (points.length && points[0].t < t - KEEP_SECONDS) points.shift();
  };

  const COLORS = {
    accepted: '#1c7a3e',
    rejected: '#c77700',
    '5xx': '#b3261e',
    'gate stock': '#2f5bd3',
    'MySQL stock': '#7b3fb5',
    up: '#1c7a3e',
    degraded: '#c77700',
    down: '#b3261e',
  };
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
    for (const p of points)
      for (const label of Object.keys(pick(p))) if (!labels.includes(label)) labels.push(label);
    // lines on their own axes are drawn first and wider: when the flood fits in one beat, accepted and rejected
    // rise and fall together, and on axes scaled alike the one drawn last would hide the other entirely
    labels.sort((a, b) => Number(OWN_AXIS.includes(b)) - Number(OWN_AXIS.includes(a)));
    const data = [
      points.map((p) => p.t),
      ...labels.map((label) => points.map((p) => pick(p)[label] ?? null)),
    ];
    let shown = plots.get(id);
    // a series that appears (a consumer group, say) makes the chart anew with one more line
    if (!shown || shown.labels.join('|') !== labels.join('|')) {
      if (shown) shown.plot.destroy();
      const stroke = (label, n) => COLORS[label] || PALETTE[n % PALETTE.length];
      const series = [
        {},
        ...labels.map((label, n) => ({
          label,
          scale: OWN_AXIS.includes(label) ? label : 'y',
          stroke: stroke(label, n),
          width: OWN_AXIS.includes(label) ? 5 : 2,
          points: { show: false },
        })),
      ];
      const axes = [
        {},
        { size: 60 },
        ...labels
          .filter((label) => OWN_AXIS.includes(label))
          .map((label) => ({
            scale: label,
            side: 1,
            size: 60,
            stroke: COLORS[label],
            grid: { show: false },
          })),
      ];
      shown = {
        labels,
        plot: new uPlot(
          {
            width: widthOf(el),
            height: HEIGHT,
            scales: { x: { time: true } },
            axes,
            legend: { live: false },
            series,
          },
          data,
          el,
        ),
      };
      plots.set(id, shown);
    } else {
      shown.plot.setData(data);
    }
    el.dataset.points = String(points.length);
  };
  addEventListener('resize', () => {
    for (const [id, shown] of plots) shown.plot.setSize({ width: widthOf($(id)), height: HEIGHT });
  });

  const ago = (ms) =>
    ms < 1000
      ? 'just now'
      : ms < 60000
        ? (ms / 1000).toFixed(1) + ' s ago'
        : Math.round(ms / 60000) + ' min ago';
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
      cell(i.role),
      cell(i.instanceId),
      cell(i.host),
      cell(String(i.pid)),
      cell(i.status + ' · ' + ago(i.lastSeenAgoMs), {
        'data-field': 'status',
        title: 'last beat ' + i.lastSeenAt + ', every ' + i.beatEveryMs + ' ms',
      }),
      readiness(i.ready),
      ...['accepted', 'rejected', 'failed', 'committed', 'released'].map((k) =>
        cell(fmt(i.counts[k]), { 'data-field': k }),
      ),
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
    $('instances').replaceChildren(
      ...(f.instances.length
        ? f.instances.map(instanceRow)
        : [placeholder(11, 'no instance has beaten yet')]),
    );
  };
  const productRow = (p) => {
    const tr = document.createElement('tr');
    tr.dataset.product = String(p.productId);
    const released =
      Object.entries(p.released)
        .map(([r, n]) => r + ' ' + fmt(n))
        .join(', ') || '0';
    tr.append(
      cell(String(p.productId)),
      cell(p.name),
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
    $('products').replaceChildren(
      ...(f.products.length ? f.products.map(productRow) : [placeholder(8, 'no products listed')]),
    );
    $('outbox').replaceChildren(
      ...Object.entries(f.outbox).map(([s, n]) => {
        const tr = document.createElement('tr');
        tr.append(cell(s), cell(fmt(n), { 'data-outbox': s }));
        return tr;
      }),
    );
    $('lag').replaceChildren(
      ...f.consumerLag.map((g) => {
        const tr = document.createElement('tr');
        tr.append(cell(g.groupId + ' ← ' + g.topic), cell(fmt(g.lag), { 'data-lag': g.groupId }));
        return tr;
      }),
    );
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
      const res = await fetch('api/v1/admin/dashboard', {
        headers: { authorization: 'Bearer ' + token },
        cache: 'no-store',
      });
      const body = await res.json();
      if (res.ok) render(body);
      else status(res.status + ' ' + (body.code || '') + ': ' + (body.detail || ''), true);
    } catch (e) {
      status('no answer: ' + e, true);
    } finally {
      busy = false;
    }
  };
  setInterval(tick, 1000);
  tick();
})();
