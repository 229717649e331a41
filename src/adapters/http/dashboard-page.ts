/**
 * The live sale dashboard: one static page that polls `GET /api/v1/admin/dashboard` once a second with the
 * admin token the operator pastes in (kept for the browser tab only, in sessionStorage; `#token=…` in the
 * address fills it in). No assets from elsewhere: it works on a machine with no internet access. Its style and
 * script are files of their own (`/dashboard/dashboard.css`, `/dashboard/dashboard.js`), so that its Content
 * Security Policy allows no inline code: a script injected into the page would not run, and could not read the
 * admin token.
 */
export const DASHBOARD_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>seckill · live sale</title>
<link rel="stylesheet" href="/dashboard/dashboard.css">
</head>
<body>
<h1>seckill · live sale</h1>
<div class="sub">Every figure is read again each second from <code>GET /api/v1/admin/dashboard</code>. <span id="status">waiting for an admin token</span></div>
<form id="auth"><input id="token" type="password" placeholder="admin bearer token (npx seckill token --user ops --admin)" autocomplete="off"><button>Watch</button></form>
<div class="tiles">
  <div class="tile"><div class="label">accepted / s</div><div class="value" id="accepted">–</div></div>
  <div class="tile"><div class="label">rejected / s</div><div class="value" id="rejected">–</div></div>
  <div class="tile"><div class="label">sold (all products)</div><div class="value" id="sold-total">–</div></div>
  <div class="tile"><div class="label">outbox pending</div><div class="value" id="outbox-pending">–</div></div>
  <div class="tile"><div class="label">outbox dead</div><div class="value" id="outbox-dead">–</div></div>
  <div class="tile"><div class="label">consumer lag</div><div class="value" id="lag-total">–</div></div>
</div>
<table>
  <thead><tr><th>product</th><th>name</th><th title="orders carry a single-use token from POST /api/v1/seckill/products/{id}/path">sale path</th><th>gate stock</th><th>MySQL stock</th><th>sold</th><th>reserved, undecided</th><th>released</th></tr></thead>
  <tbody id="products"><tr><td colspan="8">no data yet</td></tr></tbody>
</table>
<h2>Outbox rows by status</h2>
<table><tbody id="outbox"></tbody></table>
<h2>Consumer lag</h2>
<table><tbody id="lag"></tbody></table>
<script src="/dashboard/dashboard.js"></script>
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
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(160px, 1fr)); gap: 12px; margin-bottom: 16px; }
.tile { background: #fff; border-radius: 6px; padding: 10px 14px; box-shadow: 0 1px 2px #0001; }
.tile .label { color: #5b6475; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.tile .value { font-size: 26px; font-variant-numeric: tabular-nums; }
table { width: 100%; border-collapse: collapse; background: #fff; border-radius: 6px; box-shadow: 0 1px 2px #0001; }
th, td { padding: 8px 10px; text-align: right; border-bottom: 1px solid #eceef2; font-variant-numeric: tabular-nums; }
th:first-child, td:first-child, th:nth-child(2), td:nth-child(2) { text-align: left; }
th { font-size: 12px; color: #5b6475; text-transform: uppercase; letter-spacing: .04em; }
td.sold { font-weight: 600; color: #1c7a3e; }
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
  const fmt = (n) => (n === null || n === undefined ? '–' : Number(n).toLocaleString('en'));
  const cell = (text, attrs) => { const td = document.createElement('td'); td.textContent = text; for (const [k, v] of Object.entries(attrs || {})) td.setAttribute(k, v); return td; };
  const status = (text, error) => { $('status').textContent = text; $('status').className = error ? 'error' : ''; };
  const render = (f) => {
    $('accepted').textContent = fmt(f.rates.acceptedPerSecond);
    $('rejected').textContent = fmt(f.rates.rejectedPerSecond);
    $('sold-total').textContent = fmt(f.products.reduce((n, p) => n + p.sold, 0));
    $('outbox-pending').textContent = fmt(f.outbox.pending + f.outbox.failed);
    $('outbox-dead').textContent = fmt(f.outbox.dead);
    $('lag-total').textContent = fmt(f.consumerLag.reduce((n, g) => n + g.lag, 0));
    const rows = f.products.map((p) => {
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
    });
    $('products').replaceChildren(...(rows.length ? rows : [Object.assign(document.createElement('tr'), { innerHTML: '<td colspan="8">no products listed</td>' })]));
    $('outbox').replaceChildren(...Object.entries(f.outbox).map(([s, n]) => { const tr = document.createElement('tr'); tr.append(cell(s), cell(fmt(n), { 'data-outbox': s })); return tr; }));
    $('lag').replaceChildren(...f.consumerLag.map((g) => { const tr = document.createElement('tr'); tr.append(cell(g.groupId + ' ← ' + g.topic), cell(fmt(g.lag), { 'data-lag': g.groupId })); return tr; }));
    status('updated ' + new Date(f.at).toLocaleTimeString() + ' (rates from ' + f.rates.instance + ')', false);
    document.body.dataset.updatedAt = f.at;
  };
  let busy = false;
  const tick = async () => {
    if (!token || busy) return;
    busy = true;
    try {
      const res = await fetch('/api/v1/admin/dashboard', { headers: { authorization: 'Bearer ' + token } });
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
