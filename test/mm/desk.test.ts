// Issue 22 against the real service and real maker sockets (`ws`, ethers): the sequenced stream and its resume,
// the quote book (cancel answered, cancel-all, GET /v1/mm/quotes), protection (maker and operator limits, the
// tighter wins, trip and reset), the stats, and the RateLimit-* headers.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Wallet } from 'ethers';
import { client } from '../helpers/http.js';
import { connectMaker, connectNewMaker, registerMaker, type ConnectedMaker } from '../helpers/makers.js';
import { fundedTaker, signedOrder, unsignedBody } from '../helpers/rfq.js';
import { removeDataDir, startServer, type TestServer } from '../helpers/server.js';

describe('maker desk (issue 22)', () => {
  let server: TestServer;
  let taker: Awaited<ReturnType<typeof fundedTaker>>;
  /** Connected for the whole suite and silent: it keeps every RFQ open for its quote window. */
  let holder: ConnectedMaker;
  let nonce = 1;

  before(async () => {
    server = await startServer({
      env: {
        PARLAYD_QUOTE_WINDOW_MS: '3000',
        PARLAYD_MM_REPLAY_MAX_MESSAGES: '16',
        // Slow refill, so RateLimit-Remaining visibly falls by one per request.
        PARLAYD_RATE_LIMIT_PER_S: '1',
        PARLAYD_RATE_LIMIT_BURST: '1000',
      },
    });
    taker = await fundedTaker(server, 100_000_000);
    holder = await connectNewMaker(server);
  });
  after(async () => {
    await holder.close();
    await server.stop();
    removeDataDir(server);
  });

  const unsignedRfq = async (): Promise<string> => {
    const res = await taker.api.post('/v1/rfq/unsigned', unsignedBody([{ market_id: taker.market, direction: 'up' }]));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.request_id as string;
  };
  const signedRfq = async (expiresInMs: number): Promise<string> => {
    const order = await signedOrder(taker.user.wallet, {
      wager_micros: 1_000_000,
      min_odds: 1.5,
      legs: [{ market_id: taker.market, direction: 'up' }],
      nonce: nonce++,
      expires_at_ms: Date.now() + expiresInMs,
      shield_on: false,
    });
    const res = await taker.api.post('/v1/rfq', { order });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return res.body.request_id as string;
  };
  const rfqFor = async (maker: ConnectedMaker, requestId: string) => {
    for (;;) {
      const rfq = await maker.next('rfq');
      if (rfq.request_id === requestId) return rfq;
    }
  };

  it('every message after auth_result carries seq, gapless from 1; the handshake messages carry none', async () => {
    const maker = await connectNewMaker(server);
    const requestId = await unsignedRfq();
    await rfqFor(maker, requestId);
    maker.send({ type: 'decline', request_id: requestId });
    maker.send({ type: 'nonsense' });
    await maker.next('error');
    assert.deepEqual(maker.socket.seqs.slice(0, 2), [null, null]); // auth_challenge, auth_result
    const numbered = maker.socket.seqs.slice(2);
    assert.deepEqual(
      numbered,
      numbered.map((_, i) => i + 1),
    );
    assert.ok(numbered.length >= 2);
    await maker.close();
  });

  it('resume replays what the lost socket was sent after last_seq, less rfqs past their quote deadline; the maker may quote a replayed rfq', async () => {
    const maker = await registerMaker(server);
    const first = await connectMaker(server, maker);
    const lastSeqRead = first.socket.lastSeq;
    const expiring = await signedRfq(300); // its quote deadline is its expiry: 300 ms
    const live = await unsignedRfq(); // open for 3 s
    await rfqFor(first, expiring);
    await rfqFor(first, live);
    await first.close();
    await new Promise((r) => setTimeout(r, 400));

    const second = await connectMaker(server, maker);
    second.send({ type: 'resume', session_token: first.sessionToken, last_seq: lastSeqRead });
    const resumed = await second.next('resumed');
    const replayed = second.socket.received.filter((m) => m.type === 'rfq');
    assert.deepEqual(
      replayed.map((m) => (m as { request_id: string }).request_id),
      [live],
    );
    assert.equal(resumed.replayed, 1);
    assert.equal(resumed.next_seq, second.socket.lastSeq + 1);
    second.send({ type: 'quote', request_id: live, quote_id: 'after-resume', odds: 1.8, max_wager_micros: '5000000' });
    assert.equal((await second.next('quote_ack')).quote_id, 'after-resume');

    // A stream is resumed once; another maker's session is nobody's stream to this maker.
    second.send({ type: 'resume', session_token: first.sessionToken, last_seq: lastSeqRead });
    assert.deepEqual(await second.next('resume_failed'), { type: 'resume_failed', reason: 'UNKNOWN_SESSION', oldest_seq: null });
    second.send({ type: 'resume', session_token: holder.sessionToken, last_seq: 0 });
    assert.deepEqual(await second.next('resume_failed'), { type: 'resume_failed', reason: 'UNKNOWN_SESSION', oldest_seq: null });
    assert.equal(holder.socket.isOpen, true);
    await second.close();
  });

  it('an rfq a resume replayed is not replayed again by a later resume past its quote deadline', async () => {
    const maker = await registerMaker(server);
    const first = await connectMaker(server, maker);
    const lastSeqRead = first.socket.lastSeq;
    const expiring = await signedRfq(600); // its quote deadline is its expiry: 600 ms
    await rfqFor(first, expiring);
    await first.close();

    // Resumed before the deadline: the rfq is replayed, and held again on the new stream.
    const second = await connectMaker(server, maker);
    second.send({ type: 'resume', session_token: first.sessionToken, last_seq: lastSeqRead });
    assert.equal((await second.next('resumed')).replayed, 1);
    const secondSeqBefore = second.socket.seqs.filter((s) => s !== null)[0]! - 1;
    await second.close();
    await new Promise((r) => setTimeout(r, 700));

    // Resumed again past it: the replayed rfq stays behind, as the first stream's would have.
    const third = await connectMaker(server, maker);
    third.send({ type: 'resume', session_token: second.sessionToken, last_seq: secondSeqBefore });
    const resumed = await third.next('resumed');
    assert.deepEqual(
      third.socket.received.filter((m) => m.type === 'rfq'),
      [],
    );
    assert.equal(resumed.replayed, 0);
    await third.close();
  });

  it('a last look is not replayed by a resume (the drop ended it as a reject); the replay tells the quote and the RFQ its end', async () => {
    const maker = await registerMaker(server);
    const first = await connectMaker(server, maker);
    const requestId = await unsignedRfq();
    await rfqFor(first, requestId);
    const lastSeqRead = first.socket.lastSeq;
    first.send({ type: 'quote', request_id: requestId, quote_id: 'looked', odds: 1.8, max_wager_micros: '5000000', last_look: true });
    assert.equal((await first.next('quote_ack')).quote_id, 'looked');
    holder.send({ type: 'decline', request_id: requestId });
    assert.equal((await first.next('last_look')).quote_id, 'looked');
    await first.close(); // unanswered

    const second = await connectMaker(server, maker);
    second.send({ type: 'resume', session_token: first.sessionToken, last_seq: lastSeqRead });
    await second.next('resumed');
    const result = await second.next('rfq_result'); // replayed, or live if the end came after the resume
    assert.equal(result.request_id, requestId);
    assert.notEqual(result.outcome, 'won');
    const types = second.socket.received.map((m) => m.type);
    assert.ok(types.includes('quote_ack'), types.join());
    assert.equal(types.includes('last_look'), false, `replayed: ${types.join()}`);
    await second.close();
  });

  it('resume_failed SEQ_TOO_OLD names the oldest seq still held when the ring has moved past last_seq', async () => {
    const maker = await registerMaker(server);
    const first = await connectMaker(server, maker);
    for (let i = 0; i < 20; i++) first.socket.sendRaw('not json');
    for (let i = 0; i < 20; i++) await first.next('error');
    const sent = first.socket.lastSeq; // 20 errors: the ring (16) holds 5..20
    await first.close();
    const second = await connectMaker(server, maker);
    second.send({ type: 'resume', session_token: first.sessionToken, last_seq: 0 });
    assert.deepEqual(await second.next('resume_failed'), { type: 'resume_failed', reason: 'SEQ_TOO_OLD', oldest_seq: sent - 15 });
    second.send({ type: 'resume', session_token: first.sessionToken, last_seq: sent + 1 });
    assert.deepEqual(await second.next('resume_failed'), { type: 'resume_failed', reason: 'SEQ_AHEAD', oldest_seq: sent - 15 });
    second.send({ type: 'resume', session_token: first.sessionToken, last_seq: sent - 2 });
    const resumed = await second.next('resumed');
    assert.equal(resumed.replayed, 2);
    await second.close();
  });

  it('quote book: GET /v1/mm/quotes lists standing quotes; quote_cancel is answered quote_cancelled or QUOTE_NOT_FOUND; quote_cancel_all answers the count', async () => {
    const maker = await connectNewMaker(server);
    const api = client(server.baseUrl, maker.sessionToken);
    const [r1, r2] = [await unsignedRfq(), await unsignedRfq()];
    await rfqFor(maker, r1);
    await rfqFor(maker, r2);
    const sentAtMs = Date.now();
    maker.send({ type: 'quote', request_id: r1, quote_id: 'a', odds: 1.7, max_wager_micros: '3000000', last_look: true });
    maker.send({ type: 'quote', request_id: r1, quote_id: 'b', odds: 1.6, max_wager_micros: '4000000' });
    maker.send({ type: 'quote', request_id: r2, quote_id: 'c', odds: 1.9, max_wager_micros: '5000000' });
    const acks = [await maker.next('quote_ack'), await maker.next('quote_ack'), await maker.next('quote_ack')];
    const book = await api.get('/v1/mm/quotes');
    assert.equal(book.status, 200);
    assert.deepEqual(book.body, {
      quotes: [
        { request_id: r1, quote_id: 'a', odds: 1.7, max_wager_micros: '3000000', last_look: true, received_at_ms: acks[0]!.received_at_ms },
        {
          request_id: r1,
          quote_id: 'b',
          odds: 1.6,
          max_wager_micros: '4000000',
          last_look: false,
          received_at_ms: acks[1]!.received_at_ms,
        },
        {
          request_id: r2,
          quote_id: 'c',
          odds: 1.9,
          max_wager_micros: '5000000',
          last_look: false,
          received_at_ms: acks[2]!.received_at_ms,
        },
      ].sort((x, y) => x.received_at_ms - y.received_at_ms),
    });
    assert.ok(acks.every((a) => a.received_at_ms >= sentAtMs - 1 && a.received_at_ms <= Date.now()));

    maker.send({ type: 'quote_cancel', request_id: r1, quote_id: 'a' });
    assert.deepEqual(await maker.next('quote_cancelled'), { type: 'quote_cancelled', request_id: r1, quote_id: 'a' });
    maker.send({ type: 'quote_cancel', request_id: r1, quote_id: 'a' });
    const notFound = await maker.next('error');
    assert.equal(notFound.code, 'QUOTE_NOT_FOUND');
    assert.equal(notFound.quote_id, 'a');
    assert.deepEqual((await api.get('/v1/mm/quotes')).body.quotes.map((q: { quote_id: string }) => q.quote_id).sort(), ['b', 'c']);

    maker.send({ type: 'quote_cancel_all' });
    assert.deepEqual(await maker.next('quotes_cancelled'), { type: 'quotes_cancelled', count: 2 });
    assert.deepEqual((await api.get('/v1/mm/quotes')).body, { quotes: [] });
    await maker.close();
  });

  it("quote book and stats follow the shards' answers (issue 35: typed facts): a refused quote leaves, a repeated id keeps the standing one, a quote naming no shard never enters, a last look rejected is counted", async () => {
    const maker = await connectNewMaker(server);
    const api = client(server.baseUrl, maker.sessionToken);
    const quoteIds = async () =>
      ((await api.get('/v1/mm/quotes')).body.quotes as Array<{ quote_id: string }>).map((q) => q.quote_id).sort();
    const quote = (requestId: string, quoteId: string, lastLook = false) =>
      maker.send({ type: 'quote', request_id: requestId, quote_id: quoteId, odds: 1.8, max_wager_micros: '5000000', last_look: lastLook });

    // Its request id names no shard: refused on the main thread, and never in the book.
    quote('ffffffff-0000-4000-8000-000000000000', 'nowhere');
    assert.equal((await maker.next('quote_reject')).reason, 'RFQ_CLOSED');
    // Sent before this maker connected: the shard refuses it (NOT_IN_AUDIENCE) and it leaves the book.
    const early = await unsignedRfq();
    const late = await connectNewMaker(server);
    late.send({ type: 'quote', request_id: early, quote_id: 'late', odds: 1.8, max_wager_micros: '5000000' });
    assert.equal((await late.next('quote_reject')).reason, 'NOT_IN_AUDIENCE');
    assert.deepEqual((await client(server.baseUrl, late.sessionToken).get('/v1/mm/quotes')).body, { quotes: [] });
    await late.close();

    // Offered a last look, the maker rejects it: the RFQ ends, its quote leaves, both counts move.
    const looked = await unsignedRfq();
    await rfqFor(maker, looked);
    quote(looked, 'll', true);
    assert.equal((await maker.next('quote_ack')).quote_id, 'll');
    assert.deepEqual(await quoteIds(), ['ll']);
    holder.send({ type: 'decline', request_id: looked });
    const offer = await maker.next('last_look');
    assert.equal(offer.quote_id, 'll');
    maker.send({ type: 'last_look_response', request_id: looked, quote_id: 'll', accept: false });
    const result = await maker.next('rfq_result');
    assert.equal(result.request_id, looked);
    assert.notEqual(result.outcome, 'won');
    assert.deepEqual(await quoteIds(), []);
    const stats = await api.get(`/v1/mm/stats?since_ms=${Date.now() - 60_000}`);
    assert.equal(stats.body.last_look_offered, 1);
    assert.equal(stats.body.last_look_rejected, 1);
    assert.equal(stats.body.fills, 0);

    const open = await unsignedRfq();
    await rfqFor(maker, open);
    quote(open, 'd');
    assert.equal((await maker.next('quote_ack')).quote_id, 'd');
    quote(open, 'd');
    assert.equal((await maker.next('quote_reject')).reason, 'DUPLICATE_QUOTE_ID');
    assert.deepEqual(await quoteIds(), ['d'], 'the repeat is refused, the standing quote stays');
    maker.send({ type: 'quote_cancel_all' });
    assert.deepEqual(await maker.next('quotes_cancelled'), { type: 'quotes_cancelled', count: 1 });
    await maker.close();
  });

  /** A new RFQ filled by `maker` at odds 1.8 (the holder declines it, so it closes at once). */
  const fillBy = async (maker: ConnectedMaker, quoteId: string): Promise<void> => {
    const requestId = await unsignedRfq();
    await rfqFor(maker, requestId);
    maker.send({ type: 'quote', request_id: requestId, quote_id: quoteId, odds: 1.8, max_wager_micros: '5000000' });
    assert.equal((await maker.next('quote_ack')).quote_id, quoteId);
    holder.send({ type: 'decline', request_id: requestId });
    assert.equal((await maker.next('rfq_result')).outcome, 'won');
  };

  it("protection: the operator's tighter max_fills wins; a fill that reaches it trips, quotes are refused until protection_reset", async () => {
    const maker = await connectNewMaker(server);
    const api = client(server.baseUrl, maker.sessionToken);
    const limits = { window_ms: 60_000, max_fills: 2, max_filled_wager_micros: null, max_locked_micros: null };
    assert.equal((await api.put('/v1/mm/protection', limits)).status, 200);
    const admin = client(server.baseUrl, server.adminToken);
    const byAdmin = await admin.put(`/v1/admin/market-makers/${maker.address}/protection`, { ...limits, window_ms: null, max_fills: 1 });
    assert.equal(byAdmin.status, 200, JSON.stringify(byAdmin.body));
    assert.deepEqual((await api.get('/v1/mm/protection')).body, {
      maker: limits,
      admin: { ...limits, window_ms: null, max_fills: 1 },
      effective: { ...limits, max_fills: 1 },
      tripped: null,
    });

    const filled = await unsignedRfq();
    await rfqFor(maker, filled);
    maker.send({ type: 'quote', request_id: filled, quote_id: 'f', odds: 1.8, max_wager_micros: '5000000' });
    assert.equal((await maker.next('quote_ack')).quote_id, 'f');
    holder.send({ type: 'decline', request_id: filled });
    assert.equal((await maker.next('rfq_result')).outcome, 'won');
    assert.deepEqual(await maker.next('protection_tripped'), { type: 'protection_tripped', reason: 'MAX_FILLS' });
    assert.equal((await api.get('/v1/mm/protection')).body.tripped, 'MAX_FILLS');

    const refused = await unsignedRfq();
    await rfqFor(maker, refused);
    maker.send({ type: 'quote', request_id: refused, quote_id: 'r', odds: 1.8, max_wager_micros: '5000000' });
    assert.deepEqual(await maker.next('quote_reject'), {
      type: 'quote_reject',
      request_id: refused,
      quote_id: 'r',
      reason: 'PROTECTION_TRIPPED',
    });
    maker.send({ type: 'protection_reset' });
    await maker.next('protection_reset_ok');
    maker.send({ type: 'quote', request_id: refused, quote_id: 'r2', odds: 1.8, max_wager_micros: '5000000' });
    assert.equal((await maker.next('quote_ack')).quote_id, 'r2');
    assert.equal((await api.get('/v1/mm/protection')).body.tripped, null);

    // Stats of this maker: two rfqs, three quotes (one refused), one fill of the 2 USDC wager.
    const stats = await api.get(`/v1/mm/stats?since_ms=${Date.now() - 60_000}`);
    assert.equal(stats.status, 200);
    assert.equal(stats.body.rfqs_received, 2);
    assert.equal(stats.body.quotes, 3);
    assert.equal(stats.body.declines, 0);
    assert.equal(stats.body.fills, 1);
    assert.equal(stats.body.hit_rate, 1 / 3);
    assert.equal(stats.body.filled_wager_micros, '2000000');
    assert.equal(stats.body.last_look_offered, 0);
    const { p50, p90, p99 } = stats.body.quote_latency_ms as Record<string, number>;
    assert.ok(p50! > 0 && p50! <= p90! && p90! <= p99!, JSON.stringify(stats.body.quote_latency_ms));
    maker.send({ type: 'quote_cancel_all' });
    await maker.next('quotes_cancelled');
    await maker.close();
  });

  it("protection by max_locked_micros reads the maker's locked collateral in the ledger: the fill that reaches it trips", async () => {
    const maker = await connectNewMaker(server);
    const api = client(server.baseUrl, maker.sessionToken);
    // A 2 USDC wager at odds 1.8 locks 1.6 USDC: the first fill stays under 2 USDC, the second reaches it.
    const limits = { window_ms: null, max_fills: null, max_filled_wager_micros: null, max_locked_micros: '2000000' };
    assert.equal((await api.put('/v1/mm/protection', limits)).status, 200);
    await fillBy(maker, 'l1');
    assert.equal((await api.get('/v1/mm/balance')).body.locked_micros, '1600000');
    assert.equal((await api.get('/v1/mm/protection')).body.tripped, null, 'under the limit');
    await fillBy(maker, 'l2');
    assert.deepEqual(await maker.next('protection_tripped'), { type: 'protection_tripped', reason: 'MAX_LOCKED' });
    assert.equal((await api.get('/v1/mm/balance')).body.locked_micros, '3200000');
    maker.send({ type: 'protection_reset' });
    await maker.next('protection_reset_ok');
    await maker.close();
  });

  it('protection by max_filled_wager_micros in a window: the fill whose wager reaches it trips', async () => {
    const maker = await connectNewMaker(server);
    const api = client(server.baseUrl, maker.sessionToken);
    // Each fill is the taker's 2 USDC wager: the first stays under 3 USDC, the second reaches it.
    const limits = { window_ms: 60_000, max_fills: null, max_filled_wager_micros: '3000000', max_locked_micros: null };
    assert.equal((await api.put('/v1/mm/protection', limits)).status, 200);
    await fillBy(maker, 'w1');
    assert.equal((await api.get('/v1/mm/protection')).body.tripped, null, 'under the limit');
    await fillBy(maker, 'w2');
    assert.deepEqual(await maker.next('protection_tripped'), { type: 'protection_tripped', reason: 'MAX_FILLED_WAGER' });
    maker.send({ type: 'protection_reset' });
    await maker.next('protection_reset_ok');
    await maker.close();
  });

  it('a PUT of protection for an unregistered maker is 404 MAKER_NOT_FOUND; a limit of the wrong type is 400', async () => {
    const admin = client(server.baseUrl, server.adminToken);
    const body = { window_ms: null, max_fills: 1, max_filled_wager_micros: null, max_locked_micros: null };
    assert.equal(
      (await admin.put(`/v1/admin/market-makers/${Wallet.createRandom().address}/protection`, body)).body.code,
      'MAKER_NOT_FOUND',
    );
    const maker = await connectNewMaker(server);
    const bad = await client(server.baseUrl, maker.sessionToken).put('/v1/mm/protection', { ...body, max_filled_wager_micros: 5 });
    assert.equal(bad.status, 400);
    await maker.close();
  });

  it('every HTTP response carries RateLimit-Limit, -Remaining and -Reset of the bucket it was charged to', async () => {
    const maker = await connectNewMaker(server);
    const api = client(server.baseUrl, maker.sessionToken);
    const first = await api.get('/v1/mm/quotes');
    const second = await api.get('/v1/mm/quotes');
    assert.equal(first.headers.get('ratelimit-limit'), '1000');
    const [a, b] = [Number(first.headers.get('ratelimit-remaining')), Number(second.headers.get('ratelimit-remaining'))];
    assert.ok(b === a - 1 || b === a, `${a} then ${b}`); // one spent, at most one refilled (1/s)
    assert.ok(Number(second.headers.get('ratelimit-reset')) >= 1);
    const notFound = await client(server.baseUrl).get('/v1/no-such-route');
    assert.equal(notFound.status, 404);
    assert.equal(notFound.headers.get('ratelimit-limit'), '1000');
    assert.match(notFound.headers.get('ratelimit-remaining') ?? '', /^\d+$/);
    await maker.close();
  });
});
