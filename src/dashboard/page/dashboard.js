// The dashboard page's logic: asks for the admin token, keeps it in this tab's sessionStorage only (gone
// when the tab closes; never localStorage, a cookie or a URL), sends it as the first message of the live
// feed, and draws each frame the feed sends (src/dashboard/frame.ts describes a frame).
'use strict';

(function () {
  const TOKEN_KEY = 'parlayd.adminToken';
  const FEED_PATH = '/v1/admin/dashboard/ws';
  /** After a dropped feed (a restart of the service): try again this often while the tab holds a token. */
  const RETRY_MS = 2000;
  const REFUSALS = {
    UNAUTHENTICATED: 'That token was refused: it is not the admin token.',
    FORBIDDEN: 'That token is not an admin token.',
    RATE_LIMITED: 'Too many wrong tokens from this network: wait a little and try again.',
  };
  const STATUS_COLORS = { created: '#8ab4f8', completed: '#5ec4b6', failed: '#e76f51', timeout: '#e9c46a', cancelled: '#b48ead' };

  const $ = (id) => document.getElementById(id);
  let socket = null;
  let charts = null;
  let shardChart = null;
  let lastAtMs = 0;

  function setStatus(text, kind) {
    $('status').textContent = text;
    $('status').className = 'status ' + (kind || '');
  }

  function showLogin(message) {
    $('board').hidden = true;
    $('forget').hidden = true;
    $('login').hidden = false;
    $('auth-error').textContent = message || '';
    $('auth-error').hidden = !message;
    $('token').focus();
  }

  function showBoard() {
    $('login').hidden = true;
    $('board').hidden = false;
    $('forget').hidden = false;
    // Made once the board is laid out, so each chart takes its panel's width.
    if (charts === null) {
      const C = window.DashboardCharts;
      const fixed = (d) => (v) => v.toFixed(d);
      charts = {
        rates: C.create($('chart-rates'), Object.keys(STATUS_COLORS).map((s) => ({ label: s, color: STATUS_COLORS[s] })), fixed(1)),
        latency: C.create($('chart-latency'), [{ label: 'p50', color: '#5ec4b6' }, { label: 'p99', color: '#e76f51' }], fixed(1)),
        quotes: C.create($('chart-quotes'), [{ label: 'quotes / RFQ', color: '#8ab4f8' }], fixed(2)),
      };
    }
  }

  function connect(token) {
    setStatus('connecting…', '');
    const ws = new WebSocket((location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + FEED_PATH);
    socket = ws;
    let isRefused = false;
    ws.onopen = () => ws.send(JSON.stringify({ type: 'auth', token: token }));
    ws.onmessage = (event) => {
      const message = JSON.parse(event.data);
      if (message.type === 'auth_result' && message.ok) {
        showBoard();
        setStatus('live', 'live');
      } else if (message.type === 'auth_result') {
        isRefused = true;
        sessionStorage.removeItem(TOKEN_KEY);
        setStatus('not connected', 'down');
        showLogin(REFUSALS[message.code] || 'The token was refused.');
      } else if (message.type === 'history') {
        message.frames.forEach(render);
      } else if (message.type === 'frame') {
        render(message.frame);
      }
    };
    ws.onclose = () => {
      if (socket !== ws) return; // replaced, or forgotten on purpose
      socket = null;
      if (isRefused || sessionStorage.getItem(TOKEN_KEY) === null) return;
      setStatus('feed lost, retrying…', 'down');
      setTimeout(() => {
        const current = sessionStorage.getItem(TOKEN_KEY);
        if (current !== null && socket === null) connect(current);
      }, RETRY_MS);
    };
  }

  const dash = '—';
  const fixed = (v, digits) => (v === null || v === undefined ? dash : v.toFixed(digits));
  const whole = (v) => (v === null || v === undefined ? dash : Math.round(v).toLocaleString('en-US'));
  // Micros as USDC with two decimals (half up), in BigInt: a money figure comes as a decimal string, exact
  // past 2^53 micros where a number is not (a contest's pot, bounded below 2^53, comes as a number).
  const money = (micros) => {
    if (micros === null || micros === undefined) return dash;
    const value = BigInt(micros);
    const sign = value < 0n ? '-' : '';
    const cents = ((value < 0n ? -value : value) + 5000n) / 10000n;
    return sign + (cents / 100n).toLocaleString('en-US') + '.' + String(cents % 100n).padStart(2, '0');
  };
  const percent = (ratio) => (ratio === null || ratio === undefined ? dash : (ratio * 100).toFixed(1) + ' %');

  function setValue(id, text, kind) {
    const el = $(id);
    el.textContent = text;
    el.className = 'value ' + (kind || '');
  }

  /** One frame: tiles, a point on each chart, the two tables. Frames already drawn (a reconnect's history) are skipped. */
  function render(frame) {
    if (frame.atMs <= lastAtMs || charts === null) return;
    lastAtMs = frame.atMs;
    // A cluster's figures are its front processes' added up: the status says how many answered.
    if (frame.processes > 1) setStatus('live · ' + frame.processes + ' processes', 'live');
    const t = frame.atMs / 1000;
    setValue('v-created-rate', fixed(frame.rfqPerS.created, 1));
    setValue('v-ended', whole(frame.rfqTotals.ended));
    setValue('v-active', whole(frame.activeRfqs));
    setValue('v-latency', fixed(frame.latencyMs.p50, 0) + ' / ' + fixed(frame.latencyMs.p99, 0));
    setValue('v-quotes-per-rfq', fixed(frame.quotesPerRfq, 2));
    setValue('v-makers', whole(frame.makersConnected));
    setValue('v-verify', percent(frame.verifyPool.utilization) + ' / ' + whole(frame.verifyPool.queue));
    setValue('v-open-interest', money(frame.money.openInterestMicros));
    setValue('v-locked', money(frame.money.lockedCollateralMicros));
    setValue('v-due', whole(frame.marketsDue), frame.marketsDue > 0 ? 'bad' : '');
    renderLedger(frame.money);
    charts.rates.push(t, Object.keys(STATUS_COLORS).map((s) => frame.rfqPerS[s]));
    charts.latency.push(t, [frame.latencyMs.p50, frame.latencyMs.p99]);
    charts.quotes.push(t, [frame.quotesPerRfq]);
    if (shardChart === null && frame.shardQueueDepths.length > 0) {
      shardChart = window.DashboardCharts.create($('chart-shards'), frame.shardQueueDepths.map((_, i) => ({ label: 'shard ' + i })), (v) => v.toFixed(0));
    }
    if (shardChart !== null) shardChart.push(t, frame.shardQueueDepths);
    renderRows('makers', frame.makers, (m) => [
      m.name === null ? m.maker.slice(0, 10) + '…' : m.name + ' (' + m.maker.slice(0, 8) + '…)',
      whole(m.connections), fixed(m.quotesPerS, 1), whole(m.quotes), whole(m.fills), percent(m.hitRate),
      whole(m.lastLookAccepted) + ' / ' + whole(m.lastLookRejected),
    ]);
    renderRows('contests', frame.contests, (c) => [c.title, whole(c.entries), money(c.potMicros)]);
  }

  function renderLedger(money) {
    if (money.ledgerCheckOk === null) return setValue('v-ledger', dash);
    const ago = money.ledgerCheckAtMs === null ? '' : ' (' + Math.max(0, Math.round((Date.now() - money.ledgerCheckAtMs) / 1000)) + ' s ago)';
    setValue('v-ledger', (money.ledgerCheckOk ? '✓ clean' : '✗ differences') + ago, money.ledgerCheckOk ? 'ok' : 'bad');
  }

  /** Rows as text cells (textContent: names and titles are operator text, never markup). */
  function renderRows(tableId, items, cells) {
    const body = $(tableId).tBodies[0];
    body.replaceChildren(...items.map((item) => {
      const tr = document.createElement('tr');
      for (const text of cells(item)) {
        const td = document.createElement('td');
        td.textContent = text;
        tr.appendChild(td);
      }
      return tr;
    }));
  }

  $('login').addEventListener('submit', (event) => {
    event.preventDefault();
    const token = $('token').value.trim();
    if (token === '') return;
    $('token').value = '';
    sessionStorage.setItem(TOKEN_KEY, token);
    if (socket !== null) socket.close();
    socket = null;
    connect(token);
  });
  $('forget').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    const open = socket;
    socket = null;
    if (open !== null) open.close();
    setStatus('not connected', '');
    showLogin('');
  });

  // `npm run demo` prints /dashboard#token=…: a fragment never leaves the browser. It moves to this tab's
  // sessionStorage and out of the address bar and history at once.
  const fragment = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fragment !== null && fragment !== '') {
    sessionStorage.setItem(TOKEN_KEY, fragment);
    history.replaceState(null, '', location.pathname);
  }
  const saved = sessionStorage.getItem(TOKEN_KEY);
  if (saved !== null) connect(saved);
  else showLogin('');
})();
