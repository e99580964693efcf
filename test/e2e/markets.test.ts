// Markets (contract section 5): price markets for the configured assets x durations, one per aligned window
// (the last ms of a window and the first ms of the next are different markets), mention markets created by
// the admin, and resolution by the oracle, which is final.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { validationFailed } from '../helpers/errors.js';
import { client } from '../helpers/http.js';
import { removeDataDir, restartServer, startServer, type TestServer } from '../helpers/server.js';
import { marketKey } from '../../src/records/markets.js';
import { windowKey } from '../../src/markets/windows.js';
import { openStore } from '../../src/store/db.js';
import type { Market } from '../../src/contract/markets.js';

const MARKET_NOT_FOUND = { code: 'MARKET_NOT_FOUND', message: 'no such market' };

/** The whole price market record the service must return for a window. */
function expectedPriceMarket(actual: Market, asset: string, durationSecs: number, startMs: number): Market {
  const endMs = startMs + durationSecs * 1000;
  assert.equal(typeof actual.name, 'string');
  assert.ok((actual.name as string).includes(asset), `name ${String(actual.name)} names ${asset}`);
  assert.equal(typeof actual.description, 'string');
  return {
    market_id: actual.market_id,
    kind: 'price',
    name: actual.name,
    description: actual.description,
    status: 'OPEN',
    outcome: null,
    asset,
    duration_secs: durationSecs,
    window_start_ms: startMs,
    window_end_ms: endMs,
    source_kind: null,
    source_event_id: null,
    source_market_id: null,
    betting_closes_at_ms: endMs,
    live_ends_at_ms: endMs,
    resolution_time_ms: endMs,
    resolved_by: null,
    start_price_e8: null,
    end_price_e8: null,
  };
}

/**
 * The index (floor(now / d)) of the current window, once at least 2 s of it remain, so that "the current
 * window" the test computes is the one the service sees during the next requests.
 */
async function stableWindowIndex(durationMs: number): Promise<number> {
  const leftMs = durationMs - (Date.now() % durationMs);
  if (leftMs < 2_000) await new Promise((r) => setTimeout(r, leftMs + 10));
  return Math.floor(Date.now() / durationMs);
}

describe('price markets from configuration', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;

  before(async () => {
    server = await startServer({ env: { PARLAYD_PRICE_ASSETS: 'BTC,DOGE', PARLAYD_PRICE_DURATIONS_SECS: '60,300' } });
    api = client(server.baseUrl);
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  async function lookup(asset: string, durationSecs: number, atMs: number): Promise<Market> {
    const res = await api.get(`/v1/markets/lookup?asset=${asset}&duration_secs=${durationSecs}&at_ms=${atMs}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body), ['market']);
    return res.body.market as Market;
  }

  it('the current market of every configured asset and duration is the OPEN window containing now', async () => {
    const ids = new Set<number>();
    for (const asset of ['BTC', 'DOGE']) {
      for (const durationSecs of [60, 300]) {
        const beforeMs = Date.now();
        const res = await api.get(`/v1/markets/current?asset=${asset}&duration_secs=${durationSecs}`);
        const afterMs = Date.now();
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const market = res.body.market as Market;
        const startMs = market.window_start_ms as number;
        assert.equal(startMs % (durationSecs * 1000), 0, 'window start is aligned to the duration');
        assert.ok(startMs <= afterMs && beforeMs < startMs + durationSecs * 1000, 'window contains now');
        assert.deepEqual(market, expectedPriceMarket(market, asset, durationSecs, startMs));
        assert.ok(Number.isSafeInteger(market.market_id) && market.market_id >= 1);
        ids.add(market.market_id);
        // The current market is the market of its window: looking the window up finds the same id.
        assert.equal((await lookup(asset, durationSecs, startMs)).market_id, market.market_id);
      }
    }
    assert.equal(ids.size, 4);
  });

  it('an asset or duration that is not configured is 404 MARKET_NOT_FOUND', async () => {
    for (const [asset, durationSecs] of [
      ['SOL', 60],
      ['ETH', 300],
      ['BTC', 900],
      ['btc', 60],
    ] as const) {
      const res = await api.get(`/v1/markets/current?asset=${asset}&duration_secs=${durationSecs}`);
      assert.deepEqual(
        { status: res.status, body: res.body },
        { status: 404, body: { code: 'MARKET_NOT_FOUND', message: `no price market for ${asset} over ${durationSecs}s` } },
      );
    }
    const res = await api.get(`/v1/markets/lookup?asset=SOL&duration_secs=60&at_ms=${Date.now()}`);
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 'MARKET_NOT_FOUND');
  });

  it('the last ms of a window and the first ms of the next are adjacent windows with different ids', async () => {
    const durationMs = 300_000;
    // A boundary a few windows ahead, so "now" moving on during the test changes nothing.
    const boundaryMs = (Math.floor(Date.now() / durationMs) + 5) * durationMs;
    const last = await lookup('BTC', 300, boundaryMs - 1);
    const first = await lookup('BTC', 300, boundaryMs);
    assert.deepEqual(last, expectedPriceMarket(last, 'BTC', 300, boundaryMs - durationMs));
    assert.deepEqual(first, expectedPriceMarket(first, 'BTC', 300, boundaryMs));
    assert.notEqual(first.market_id, last.market_id);
    // Every instant of a window maps to its one market, on every ask.
    assert.deepEqual(await lookup('BTC', 300, boundaryMs - durationMs), last);
    assert.deepEqual(await lookup('BTC', 300, boundaryMs - 1), last);
    assert.deepEqual(await lookup('BTC', 300, boundaryMs + durationMs - 1), first);
    assert.deepEqual(await lookup('BTC', 300, boundaryMs), first);
  });

  it('one instant under another asset or duration is another market', async () => {
    const atMs = (Math.floor(Date.now() / 300_000) + 9) * 300_000;
    const ids = [
      (await lookup('BTC', 300, atMs)).market_id,
      (await lookup('BTC', 60, atMs)).market_id,
      (await lookup('DOGE', 300, atMs)).market_id,
      (await lookup('DOGE', 60, atMs)).market_id,
    ];
    assert.equal(new Set(ids).size, 4);
  });

  it('concurrent first lookups of a window agree on one market', async () => {
    const atMs = (Math.floor(Date.now() / 60_000) + 100) * 60_000 + 123;
    const markets = await Promise.all(Array.from({ length: 8 }, () => lookup('DOGE', 60, atMs)));
    for (const market of markets) assert.deepEqual(market, markets[0]);
  });

  it('the previous, the current and the next window, and a past window up to 288 windows back, are created', async () => {
    const durationMs = 300_000;
    const currentIndex = await stableWindowIndex(durationMs);
    for (const offset of [-288, -1, 0, 1]) {
      const startMs = (currentIndex + offset) * durationMs;
      const market = await lookup('DOGE', 300, startMs + 7);
      assert.deepEqual(market, expectedPriceMarket(market, 'DOGE', 300, startMs), `window ${offset}`);
    }
  });

  it('a window up to 2016 windows ahead is created; one further is 400 VALIDATION_FAILED and creates nothing', async () => {
    const durationMs = 300_000; // 2016 windows of 300 s: exactly 7 days
    const currentIndex = await stableWindowIndex(durationMs);
    const lastStartMs = (currentIndex + 2016) * durationMs;
    const last = await lookup('BTC', 300, lastStartMs + durationMs - 1);
    assert.deepEqual(last, expectedPriceMarket(last, 'BTC', 300, lastStartMs));
    const tooFar = validationFailed('/at_ms', 'at most 2016 windows after the current one');
    for (const atMs of [lastStartMs + durationMs, Date.now() + 8 * 86_400_000, 8_640_000_000_000_000]) {
      const res = await api.get(`/v1/markets/lookup?asset=BTC&duration_secs=300&at_ms=${atMs}`);
      assert.deepEqual({ status: res.status, body: res.body }, tooFar, String(atMs));
    }
    // The reach is in windows as well as time: 2016 windows of 60 s are 33.6 h.
    const minuteIndex = await stableWindowIndex(60_000);
    const lastMinute = await lookup('BTC', 60, (minuteIndex + 2016) * 60_000);
    assert.equal(lastMinute.window_start_ms, (minuteIndex + 2016) * 60_000);
    const res = await api.get(`/v1/markets/lookup?asset=BTC&duration_secs=60&at_ms=${(minuteIndex + 2017) * 60_000}`);
    assert.deepEqual({ status: res.status, body: res.body }, tooFar);
    // Nothing was written: the next market created takes the id right after the last one.
    const next = await lookup('BTC', 300, lastStartMs - durationMs);
    assert.equal(next.market_id, lastMinute.market_id + 1);
  });

  it('an at_ms that is a safe integer but not a date is 400 VALIDATION_FAILED, not 500', async () => {
    for (const atMs of ['9007199254740991', '8640000000000001']) {
      const res = await api.get(`/v1/markets/lookup?asset=BTC&duration_secs=300&at_ms=${atMs}`);
      assert.deepEqual(
        { status: res.status, body: res.body },
        validationFailed('/at_ms', 'Expected integer to be less or equal to 8640000000000000'),
        atMs,
      );
    }
  });

  it('a window more than 288 windows back that nobody asked for is 404 MARKET_NOT_FOUND and is not created', async () => {
    const durationMs = 300_000;
    const currentIndex = await stableWindowIndex(durationMs);
    const notCreated = {
      status: 404,
      body: {
        code: 'MARKET_NOT_FOUND',
        message: 'no market for that window: a past window is created on lookup only up to 288 windows back',
      },
    };
    const minuteIndex = await stableWindowIndex(60_000);
    const created = await lookup('DOGE', 60, (minuteIndex + 200) * 60_000);
    for (const atMs of [(currentIndex - 289) * durationMs, 0, 1_000_000_000_000]) {
      for (let ask = 0; ask < 2; ask++) {
        const res = await api.get(`/v1/markets/lookup?asset=DOGE&duration_secs=300&at_ms=${atMs}`);
        assert.deepEqual({ status: res.status, body: res.body }, notCreated, `${atMs}, ask ${ask}`);
      }
    }
    // Nothing was written: the next market created takes the id right after the last one.
    const next = await lookup('DOGE', 60, (minuteIndex + 201) * 60_000);
    assert.equal(next.market_id, created.market_id + 1);
  });

  it('a lookup with a missing, negative, fractional or non-decimal at_ms is 400 VALIDATION_FAILED', async () => {
    const missing = await api.get('/v1/markets/lookup?asset=BTC&duration_secs=300');
    assert.deepEqual(
      { status: missing.status, body: missing.body },
      {
        status: 400,
        body: {
          code: 'VALIDATION_FAILED',
          message: 'request failed validation',
          details: [
            { path: '/at_ms', message: 'Expected required property' },
            { path: '/at_ms', message: 'Expected integer' },
          ],
        },
      },
    );
    const negative = await api.get('/v1/markets/lookup?asset=BTC&duration_secs=300&at_ms=-5');
    assert.deepEqual(
      { status: negative.status, body: negative.body },
      validationFailed('/at_ms', 'Expected integer to be greater or equal to 0'),
    );
    // Never read leniently: "1e12" is not 1 ms, "1.5" is not 1, "true" is not 1.
    for (const text of ['1.5', '1e12', 'true', '0x10', '', ' 5']) {
      const res = await api.get(`/v1/markets/lookup?asset=BTC&duration_secs=300&at_ms=${encodeURIComponent(text)}`);
      assert.deepEqual({ status: res.status, body: res.body }, validationFailed('/at_ms', 'Expected integer'), JSON.stringify(text));
    }
  });

  it('a current-market query with an unknown parameter or a bad duration is 400 VALIDATION_FAILED', async () => {
    const unknown = await api.get('/v1/markets/current?asset=BTC&duration_secs=300&window=next');
    assert.deepEqual({ status: unknown.status, body: unknown.body }, validationFailed('/window', 'Unexpected property'));
    const zero = await api.get('/v1/markets/current?asset=BTC&duration_secs=0');
    assert.deepEqual(
      { status: zero.status, body: zero.body },
      validationFailed('/duration_secs', 'Expected integer to be greater or equal to 1'),
    );
  });
});

describe('price market history', () => {
  it('a window older than the creating reach is still found when its market exists', async () => {
    let server = await startServer({ env: { PARLAYD_PRICE_ASSETS: 'BTC', PARLAYD_PRICE_DURATIONS_SECS: '300' } });
    try {
      const api = client(server.baseUrl);
      const current = (await api.get('/v1/markets/current?asset=BTC&duration_secs=300')).body.market as Market;
      assert.equal(await server.stop(), 0);
      // A market asked for long ago: the same record moved to the window at Unix time zero, as if it had been
      // created then (the store cannot be given another clock).
      const store = openStore(server.dataDir);
      const old: Market = {
        ...current,
        window_start_ms: 0,
        window_end_ms: 300_000,
        betting_closes_at_ms: 300_000,
        live_ends_at_ms: 300_000,
        resolution_time_ms: 300_000,
      };
      await store.transact(() => {
        void store.db<Market>('markets').put(marketKey(current.market_id), old);
        void store.db<number>('marketWindows').remove(windowKey('BTC', 300, current.window_start_ms as number));
        void store.db<number>('marketWindows').put(windowKey('BTC', 300, 0), current.market_id);
      });
      await store.close();
      server = await restartServer(server);
      const found = await client(server.baseUrl).get('/v1/markets/lookup?asset=BTC&duration_secs=300&at_ms=299999');
      assert.deepEqual({ status: found.status, body: found.body }, { status: 200, body: { market: old } });
    } finally {
      await server.stop();
      removeDataDir(server);
    }
  });
});

describe('default price market configuration', () => {
  it('defaults are BTC, ETH, SOL over 300, 900 and 3600 seconds', async () => {
    const server = await startServer();
    try {
      const api = client(server.baseUrl);
      for (const asset of ['BTC', 'ETH', 'SOL']) {
        for (const durationSecs of [300, 900, 3600]) {
          const res = await api.get(`/v1/markets/current?asset=${asset}&duration_secs=${durationSecs}`);
          assert.equal(res.status, 200, `${asset} ${durationSecs}: ${JSON.stringify(res.body)}`);
          assert.equal(res.body.market.asset, asset);
          assert.equal(res.body.market.duration_secs, durationSecs);
        }
      }
      const other = await api.get('/v1/markets/current?asset=BTC&duration_secs=60');
      assert.equal(other.status, 404);
    } finally {
      await server.stop();
      removeDataDir(server);
    }
  });
});

describe('mention markets and resolution', () => {
  let server: TestServer;
  let api: ReturnType<typeof client>;
  let admin: ReturnType<typeof client>;

  before(async () => {
    server = await startServer();
    api = client(server.baseUrl);
    admin = client(server.baseUrl, server.adminToken);
  });
  after(async () => {
    await server.stop();
    removeDataDir(server);
  });

  let sequence = 0;
  function mentionInput(overrides: Record<string, unknown> = {}) {
    sequence += 1;
    return {
      name: `Will the speaker say "tariff" #${sequence}?`,
      source_kind: 'kalshi',
      source_event_id: `EVT-${sequence}`,
      source_market_id: `MKT-${sequence}`,
      betting_closes_at_ms: Date.now() + 3_600_000,
      ...overrides,
    };
  }

  async function createMention(overrides: Record<string, unknown> = {}): Promise<Market> {
    const res = await admin.post('/v1/admin/mention-markets', mentionInput(overrides));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body as Market;
  }

  async function resolve(marketId: number | string, outcome: string) {
    const res = await admin.post(`/v1/admin/markets/${marketId}/resolve`, { outcome });
    return { status: res.status, body: res.body };
  }

  async function listMentions(query = ''): Promise<Market[]> {
    const res = await api.get(`/v1/mention-markets${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.markets as Market[];
  }

  it('an admin creates a mention market: 201 with the whole OPEN market', async () => {
    const input = mentionInput({
      description: 'Resolves YES if the word is said during the event.',
      live_ends_at_ms: Date.now() + 7_200_000,
      resolution_time_ms: Date.now() + 9_000_000,
    });
    const res = await admin.post('/v1/admin/mention-markets', input);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.ok(Number.isSafeInteger(res.body.market_id) && res.body.market_id >= 1);
    assert.deepEqual(res.body, {
      market_id: res.body.market_id,
      kind: 'mention',
      status: 'OPEN',
      outcome: null,
      ...input,
      resolved_by: null,
      start_price_e8: null,
      end_price_e8: null,
    });
  });

  it('optional mention fields come back as null', async () => {
    const input = mentionInput();
    const res = await admin.post('/v1/admin/mention-markets', input);
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, {
      market_id: res.body.market_id,
      kind: 'mention',
      status: 'OPEN',
      outcome: null,
      description: null,
      live_ends_at_ms: null,
      resolution_time_ms: null,
      resolved_by: null,
      start_price_e8: null,
      end_price_e8: null,
      ...input,
    });
  });

  it('mention market ids are distinct from each other and from price market ids', async () => {
    const a = await createMention();
    const price = await api.get('/v1/markets/current?asset=BTC&duration_secs=300');
    const b = await createMention();
    const ids = [a.market_id, price.body.market.market_id as number, b.market_id];
    assert.equal(new Set(ids).size, 3);
    assert.ok(b.market_id > a.market_id);
  });

  it('the mention list holds every mention market and no price market, filtered by status', async () => {
    const open = await createMention();
    const resolved = await createMention();
    const voided = await createMention();
    await resolve(resolved.market_id, 'NO');
    await resolve(voided.market_id, 'VOID');
    await api.get('/v1/markets/current?asset=ETH&duration_secs=900');

    const all = await listMentions();
    assert.ok(all.every((m) => m.kind === 'mention'));
    const byId = new Map(all.map((m) => [m.market_id, m]));
    assert.deepEqual(byId.get(open.market_id), open);
    assert.equal(byId.get(resolved.market_id)?.status, 'RESOLVED');
    assert.equal(byId.get(voided.market_id)?.status, 'VOIDED');

    const idsWith = async (status: string) => (await listMentions(`?status=${status}`)).map((m) => m.market_id);
    const openIds = await idsWith('OPEN');
    const resolvedIds = await idsWith('RESOLVED');
    const voidedIds = await idsWith('VOIDED');
    assert.ok(openIds.includes(open.market_id) && !openIds.includes(resolved.market_id) && !openIds.includes(voided.market_id));
    assert.ok(resolvedIds.includes(resolved.market_id) && !resolvedIds.includes(open.market_id));
    assert.ok(voidedIds.includes(voided.market_id) && !voidedIds.includes(resolved.market_id));
    assert.equal(openIds.length + resolvedIds.length + voidedIds.length, all.length);
  });

  it('a mention list filter outside OPEN, RESOLVED, VOIDED is 400 VALIDATION_FAILED', async () => {
    const res = await api.get('/v1/mention-markets?status=open');
    assert.deepEqual({ status: res.status, body: res.body }, validationFailed('/status', 'Expected union value'));
  });

  it('a mention market time that is a safe integer but not a date is 400 VALIDATION_FAILED', async () => {
    for (const field of ['betting_closes_at_ms', 'live_ends_at_ms', 'resolution_time_ms']) {
      const res = await admin.post('/v1/admin/mention-markets', mentionInput({ [field]: 8_640_000_000_000_001 }));
      assert.deepEqual(
        { status: res.status, body: res.body },
        validationFailed(`/${field}`, 'Expected integer to be less or equal to 8640000000000000'),
        field,
      );
    }
    const latest = await admin.post('/v1/admin/mention-markets', mentionInput({ resolution_time_ms: 8_640_000_000_000_000 }));
    assert.equal(latest.status, 201, JSON.stringify(latest.body));
  });

  it('a mention market without a name, or with an unknown field, is 400 VALIDATION_FAILED', async () => {
    const { name: _name, ...nameless } = mentionInput();
    const missing = await admin.post('/v1/admin/mention-markets', nameless);
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body, {
      code: 'VALIDATION_FAILED',
      message: 'request failed validation',
      details: [
        { path: '/name', message: 'Expected required property' },
        { path: '/name', message: 'Expected string' },
      ],
    });
    const unknown = await admin.post('/v1/admin/mention-markets', mentionInput({ category: 'politics' }));
    assert.deepEqual({ status: unknown.status, body: unknown.body }, validationFailed('/category', 'Unexpected property'));
  });

  it('resolving YES makes the market RESOLVED with outcome YES; resolving YES again answers it unchanged', async () => {
    const market = await createMention();
    const beforeMs = Date.now();
    const first = await resolve(market.market_id, 'YES');
    const afterMs = Date.now();
    assert.equal(first.status, 200, JSON.stringify(first.body));
    const resolvedAtMs = first.body.resolution_time_ms as number;
    assert.ok(resolvedAtMs >= beforeMs && resolvedAtMs <= afterMs);
    assert.deepEqual(first.body, { ...market, status: 'RESOLVED', outcome: 'YES', resolution_time_ms: resolvedAtMs, resolved_by: 'admin' });
    assert.deepEqual(await resolve(market.market_id, 'YES'), first);
  });

  it('resolving NO gives outcome NO, and a price market resolves like any other', async () => {
    const price = (await api.get('/v1/markets/current?asset=SOL&duration_secs=3600')).body.market as Market;
    const res = await resolve(price.market_id, 'NO');
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, {
      ...price,
      status: 'RESOLVED',
      outcome: 'NO',
      resolution_time_ms: res.body.resolution_time_ms,
      resolved_by: 'admin',
    });
    // The window's market is now that resolved record.
    const again = await api.get('/v1/markets/current?asset=SOL&duration_secs=3600');
    if (again.body.market.window_start_ms === price.window_start_ms) assert.deepEqual(again.body.market, res.body);
  });

  it('resolving VOID makes the market VOIDED with no outcome, and VOID again answers it unchanged', async () => {
    const market = await createMention();
    const first = await resolve(market.market_id, 'VOID');
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.deepEqual(first.body, {
      ...market,
      status: 'VOIDED',
      outcome: null,
      resolution_time_ms: first.body.resolution_time_ms,
      resolved_by: 'admin',
    });
    assert.deepEqual(await resolve(market.market_id, 'VOID'), first);
  });

  it('resolving with another outcome than the first is 409 and changes nothing', async () => {
    const yes = await createMention();
    const resolved = await resolve(yes.market_id, 'YES');
    const conflict = { status: 409, body: { code: 'MARKET_ALREADY_RESOLVED', message: 'market already resolved with another outcome' } };
    assert.deepEqual(await resolve(yes.market_id, 'NO'), conflict);
    assert.deepEqual(await resolve(yes.market_id, 'VOID'), conflict);
    const voided = await createMention();
    await resolve(voided.market_id, 'VOID');
    assert.deepEqual(await resolve(voided.market_id, 'YES'), conflict);
    const listed = (await listMentions()).find((m) => m.market_id === yes.market_id);
    assert.deepEqual(listed, resolved.body);
  });

  it('resolving an unknown market is 404 MARKET_NOT_FOUND', async () => {
    assert.deepEqual(await resolve(987_654_321, 'YES'), { status: 404, body: MARKET_NOT_FOUND });
  });

  it('a resolve with a bad id or outcome is 400 VALIDATION_FAILED', async () => {
    const market = await createMention();
    assert.deepEqual(await resolve(0, 'YES'), validationFailed('/id', 'Expected integer to be greater or equal to 1'));
    for (const id of ['abc', '1.5', '1e3', 'true']) {
      assert.deepEqual(await resolve(id, 'YES'), validationFailed('/id', 'Expected integer'), id);
    }
    assert.deepEqual(await resolve(market.market_id, 'MAYBE'), validationFailed('/outcome', 'Expected union value'));
    assert.deepEqual(await resolve(market.market_id, 'yes'), validationFailed('/outcome', 'Expected union value'));
  });
});
