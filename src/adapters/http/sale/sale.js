// The buyer's page's script (src/adapters/http/sale-page.ts): plain browser JavaScript, served as it is
// written: no build step, no module, nothing from another origin. The page's policy runs no inline code: keep
// it that way, and put text in with textContent, never as markup.
(function salePage() {
  'use strict';

  const $ = (id) => document.getElementById(id);
  const productId = Number(location.pathname.split('/').filter(Boolean).pop());
  // every URL relative to the page (/sale/{id} → /api/v1/…): the same behind a balancer that serves the
  // service under a path of its own
  const root = new URL('../', location.href);
  const apiUrl = (path) => new URL(`api/v1/${path}`, root).href;

  /** the buyer's token and name, for this tab only: never in a URL, never in localStorage */
  const BUYER = 'seckill.buyer';
  /** the order this tab follows, so that a reload follows it on */
  const FOLLOWED = `seckill.order.${productId}`;
  /** an order request unanswered this long is asked again, with the same Idempotency-Key */
  const ORDER_TIMEOUT_MS = 8_000;
  const ORDER_TRIES = 5;
  const PRODUCT_POLL_MS = 2_000;
  const FINAL = new Set(['PAID', 'RELEASED']);
  const STATUS_TEXT = {
    RESERVED: 'reserved — waiting for the stock to be confirmed',
    COMMITTED: 'yours — pay to keep it',
    PAID: 'paid',
    RELEASED: 'released',
  };
  const REASON_TEXT = {
    SOLD_OUT: 'the stock ran out before it was confirmed',
    LIMIT_EXCEEDED: 'you already hold as many as one buyer may',
    CANCELLED: 'you cancelled it',
    PAYMENT_TIMEOUT: 'it was not paid in time',
    RESERVATION_FAILED: 'it could not be recorded',
  };
  const BUTTON_TEXT = {
    buying: 'Ordering…',
    'signed-out': 'Sign in to buy',
    open: 'Buy now',
    upcoming: 'Not open yet',
    'sold-out': 'Sold out',
    ended: 'Sale ended',
  };
  const REFUSAL_TEXT = {
    SOLD_OUT: 'Sold out — too late this time.',
    LIMIT_EXCEEDED: 'You already hold as many as one buyer may.',
    SALE_NOT_ACTIVE: 'The sale is not open.',
    DUPLICATE_REQUEST: 'Your order for this product is already being taken.',
    PRODUCT_NOT_FOUND: 'No product has this id.',
  };

  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
  const say = (text) => {
    $('message').textContent = text;
  };

  let buyer = null;
  let product = null;
  /** the server's clock minus this one's, from the Date of its answers, when they differ by more than 2 s */
  let skewMs = 0;
  let order = null;
  let source = null;
  let buying = false;

  // ---------------------------------------------------------------- signing in

  /** The token's subject, read (not checked: the API checks every token) to show who is signed in. */
  const subjectOf = (token) => {
    try {
      const part = token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
      const claims = JSON.parse(atob(part));
      return typeof claims.sub === 'string' ? claims.sub : null;
    } catch {
      return null;
    }
  };

  const signIn = (token) => {
    const userId = subjectOf(token);
    if (!userId) {
      say('That is not a token this page can read.');
      return;
    }
    buyer = { token, userId };
    sessionStorage.setItem(BUYER, JSON.stringify(buyer));
    say('');
    showBuyer();
  };

  const signOut = () => {
    buyer = null;
    order = null;
    source?.close();
    source = null;
    sessionStorage.removeItem(BUYER);
    sessionStorage.removeItem(FOLLOWED);
    $('order').hidden = true;
    showBuyer();
  };

  const showBuyer = () => {
    $('who').textContent = buyer ? `signed in as ${buyer.userId}` : 'not signed in';
    $('sign-out').hidden = !buyer;
    $('sign-in').hidden = Boolean(buyer);
    render();
  };

  /** Whether this service has the demo sign-in: it answers a login without a name 400, and 404 without it. */
  const offerDevLogin = async () => {
    const answer = await fetch(apiUrl('dev/login'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: '{}',
    }).catch(() => null);
    $('dev-login').hidden = !answer || answer.status === 404;
  };

  $('dev-login').addEventListener('submit', async (event) => {
    event.preventDefault();
    const answer = await fetch(apiUrl('dev/login'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ userId: $('user-id').value.trim() }),
    });
    const body = await bodyOf(answer);
    if (answer.status === 201) signIn(body.token);
    else say(body.detail ?? `The sign-in answered ${answer.status}.`);
  });

  $('token-form').addEventListener('submit', (event) => {
    event.preventDefault();
    signIn($('token').value.trim());
    $('token').value = '';
  });

  $('sign-out').addEventListener('click', signOut);

  // ---------------------------------------------------------------- the product and its window

  const bodyOf = async (answer) => {
    try {
      return await answer.json();
    } catch {
      return {};
    }
  };

  const learnClock = (answer) => {
    const date = Date.parse(answer.headers.get('Date') ?? '');
    // the header counts whole seconds: a smaller difference is its rounding, not a wrong clock
    if (!Number.isNaN(date) && Math.abs(date - Date.now()) > 2_000) skewMs = date - Date.now();
  };

  const loadProduct = async () => {
    const answer = await fetch(apiUrl(`products/${productId}`), { cache: 'no-store' }).catch(() => null);
    if (!answer) return;
    learnClock(answer);
    if (answer.status === 404) {
      product = null;
      document.body.dataset.phase = 'missing';
      $('name').textContent = 'No such product';
      $('phase').textContent = `No product has the id ${productId}.`;
      return;
    }
    if (!answer.ok) return;
    product = await answer.json();
    render();
  };

  const pollProduct = async () => {
    for (;;) {
      await loadProduct();
      await sleep(PRODUCT_POLL_MS);
    }
  };

  const clock = (ms) => {
    const total = Math.max(0, Math.ceil(ms / 1000));
    const [h, m, s] = [Math.floor(total / 3600), Math.floor(total / 60) % 60, total % 60];
    const pad = (n) => String(n).padStart(2, '0');
    return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
  };

  /** Where the sale stands now: upcoming, open, sold out or ended; with what the window figure shows. */
  const phaseOf = (now) => {
    const start = product.saleStartsAt ? Date.parse(product.saleStartsAt) : null;
    const end = product.saleEndsAt ? Date.parse(product.saleEndsAt) : null;
    if (start !== null && now < start)
      return {
        phase: 'upcoming',
        label: 'opens in',
        figure: clock(start - now),
        text: `The sale opens at ${new Date(start).toLocaleTimeString()}.`,
      };
    if (end !== null && now >= end)
      return { phase: 'ended', label: 'sale', figure: 'ended', text: 'The sale has ended.' };
    const closes =
      end === null ? { label: 'sale', figure: 'open' } : { label: 'closes in', figure: clock(end - now) };
    if (product.stockLeft <= 0) return { phase: 'sold-out', ...closes, text: 'Sold out.' };
    return { phase: 'open', ...closes, text: 'On sale now.' };
  };

  const render = () => {
    if (!product) return;
    const { phase, label, figure, text } = phaseOf(Date.now() + skewMs);
    document.body.dataset.phase = phase;
    $('name').textContent = product.name;
    $('stock-left').textContent = product.stockLeft.toLocaleString('en');
    $('limit').textContent = String(product.perUserLimit);
    $('window-label').textContent = label;
    $('countdown').textContent = figure;
    $('phase').textContent = text;
    const buy = $('buy');
    buy.disabled = phase !== 'open' || !buyer || buying;
    buy.textContent = BUTTON_TEXT[buying ? 'buying' : phase === 'open' && !buyer ? 'signed-out' : phase];
  };

  // ---------------------------------------------------------------- buying

  const call = (path, init = {}) =>
    fetch(apiUrl(path), {
      ...init,
      headers: {
        Authorization: `Bearer ${buyer.token}`,
        ...(init.body ? { 'Content-Type': 'application/json' } : {}),
        ...init.headers,
      },
    });

  const retryAfterMs = (answer) => {
    const seconds = Number(answer.headers.get('Retry-After'));
    return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : null;
  };

  /** A wait before asking again that grows with the tries, and is never the same for two buyers. */
  const backoff = (attempt) => Math.min(4_000, 250 * 2 ** attempt) * (0.5 + Math.random() / 2);

  const pathToken = async () => {
    const answer = await call(`seckill/products/${productId}/path`, { method: 'POST' });
    const body = await bodyOf(answer);
    if (!answer.ok)
      throw new Error(REFUSAL_TEXT[body.code] ?? body.detail ?? `The sale path answered ${answer.status}.`);
    return body.pathToken;
  };

  /**
   * Places one order, whatever happens on the way: one Idempotency-Key for all its tries, so that a try that
   * reached the service and lost its answer (a timeout, a cut connection, a 5xx from a server going down) is
   * answered, when asked again, with the order it made — never a second one.
   */
  const placeOrder = async () => {
    const key = crypto.randomUUID();
    let token = product.requirePathToken ? await pathToken() : undefined;
    for (let attempt = 1; ; attempt += 1) {
      let answer;
      try {
        answer = await call('seckill/orders', {
          method: 'POST',
          headers: { 'Idempotency-Key': key },
          body: JSON.stringify({ productId, quantity: 1, ...(token ? { pathToken: token } : {}) }),
          signal: AbortSignal.timeout(ORDER_TIMEOUT_MS),
        });
      } catch {
        if (attempt >= ORDER_TRIES) throw new Error('No answer from the service. Try again in a moment.');
        say(`No answer yet; asking again with the same key (try ${attempt + 1} of ${ORDER_TRIES})…`);
        await sleep(backoff(attempt));
        continue;
      }
      const body = await bodyOf(answer);
      if ([502, 503, 504].includes(answer.status) && attempt < ORDER_TRIES) {
        say(`The service is busy; asking again with the same key (try ${attempt + 1} of ${ORDER_TRIES})…`);
        await sleep(retryAfterMs(answer) ?? backoff(attempt));
        continue;
      }
      // a try that failed on the way spent the sale path token: a fresh one, with the same key
      if (answer.status === 403 && body.code === 'PATH_TOKEN_INVALID' && attempt < ORDER_TRIES) {
        token = await pathToken();
        continue;
      }
      return { answer, body };
    }
  };

  const refusalOf = (answer, body) => {
    if (answer.status === 401) {
      signOut();
      return 'Your sign-in has expired: sign in again.';
    }
    if (answer.status === 429) {
      const wait = retryAfterMs(answer);
      return wait ? `Too many tries: wait ${Math.ceil(wait / 1000)} s.` : 'Too many tries: wait a moment.';
    }
    return REFUSAL_TEXT[body.code] ?? body.detail ?? `The service answered ${answer.status}.`;
  };

  $('buy').addEventListener('click', async () => {
    if (!buyer || !product || buying) return;
    buying = true;
    say('');
    render();
    try {
      const { answer, body } = await placeOrder();
      if (answer.status === 202) {
        say('');
        await follow({ orderId: body.orderId, status: body.status, productId, quantity: 1 });
      } else {
        if (body.code === 'SOLD_OUT') product = { ...product, stockLeft: 0 };
        say(refusalOf(answer, body));
      }
    } catch (error) {
      say(error instanceof Error ? error.message : String(error));
    } finally {
      buying = false;
      render();
    }
  });

  // ---------------------------------------------------------------- following the order

  const showOrder = (view) => {
    order = { ...order, ...view };
    $('order').hidden = false;
    $('order-id').textContent = order.orderId;
    const status = $('order-status');
    status.textContent = STATUS_TEXT[order.status] ?? order.status;
    status.dataset.status = order.status;
    $('order-reason').textContent = order.reason ? `(${REASON_TEXT[order.reason] ?? order.reason})` : '';
    $('pay').hidden = order.status !== 'COMMITTED';
    $('cancel').hidden = order.status !== 'COMMITTED' && order.status !== 'RESERVED';
    $('order-note').textContent =
      order.status === 'RESERVED' ? 'Followed live: this page changes as soon as the order is decided.' : '';
  };

  /** Opens the order's event stream with a single-use ticket (an EventSource sends no Authorization header). */
  const openStream = async (opened) => {
    const answer = await call(`orders/${encodeURIComponent(order.orderId)}/stream-ticket`, {
      method: 'POST',
    });
    if (!answer.ok) return false;
    const { url } = await answer.json();
    const stream = new EventSource(new URL(url.replace(/^\//, ''), root).href);
    source = stream;
    stream.addEventListener('status', (event) => {
      showOrder(JSON.parse(event.data));
      if (FINAL.has(order.status)) stream.close();
    });
    // the stream ends once the order is decided, or at its lifetime; the ticket is spent, so the browser's own
    // reconnection would be refused: a fresh ticket while the order is still undecided
    stream.addEventListener('error', () => {
      stream.close();
      if (source === stream) source = null;
      if (order?.status === 'RESERVED' && opened < 5) setTimeout(() => void openStream(opened + 1), 1_000);
    });
    return true;
  };

  const follow = async (view) => {
    source?.close();
    source = null;
    sessionStorage.setItem(FOLLOWED, view.orderId);
    showOrder(view);
    if (!FINAL.has(order.status)) await openStream(0);
  };

  const act = async (what, path) => {
    const answer = await call(`orders/${encodeURIComponent(order.orderId)}/${path}`, { method: 'POST' });
    const body = await bodyOf(answer);
    if (answer.ok) {
      say('');
      showOrder(body);
    } else say(body.detail ?? `The ${what} answered ${answer.status}.`);
  };

  $('pay').addEventListener('click', () => void act('payment', 'payment'));
  $('cancel').addEventListener('click', () => void act('cancellation', 'cancel'));

  /** A reload goes on following the order this tab placed. */
  const resume = async () => {
    const orderId = sessionStorage.getItem(FOLLOWED);
    if (!buyer || !orderId) return;
    const answer = await call(`orders/${encodeURIComponent(orderId)}`);
    if (answer.ok) await follow(await answer.json());
    else sessionStorage.removeItem(FOLLOWED);
  };

  // ---------------------------------------------------------------- start

  try {
    buyer = JSON.parse(sessionStorage.getItem(BUYER) ?? 'null');
  } catch {
    buyer = null;
  }
  showBuyer();
  if (!Number.isInteger(productId) || productId < 1) {
    $('phase').textContent = 'This page needs a product id: /sale/{productId}.';
    return;
  }
  void offerDevLogin();
  void pollProduct();
  setInterval(render, 200);
  void resume();
})();
