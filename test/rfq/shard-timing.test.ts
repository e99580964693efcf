// The RFQ shard's timing rules (contract section 6), in process: the real actor (src/rfq/shard.ts) over a
// real LMDB store, its durable writes grouped as in a worker, and a manual clock, so each deadline is checked
// to the millisecond without sleeping. A row is one rule: how the RFQ is set up, how far time moves, what the
// actor must have done by then.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { makerAccount } from '../../src/records/ledger.js';
import { Ledger, NO_USERS } from '../../src/ledger/ledger.js';
import { Markets } from '../../src/markets/markets.js';
import type { CreateRfq, ShardInit, ShardToMain } from '../../src/rfq/messages.js';
import { RfqShard } from '../../src/rfq/shard.js';
import { LmdbDurability } from '../../src/rfq/lmdb-durability.js';
import { openStore, type Store } from '../../src/store/db.js';
import { ManualClock } from '../helpers/manual-clock.js';

const START_MS = 1_800_000_000_000;
const WAGER = 2_000_000;
const INIT: ShardInit = {
  shard: 0,
  shardCount: 1,
  dataDir: '',
  quoteWindowMs: 300,
  lastLookMs: 200,
  maxFinalizingMs: 1000,
  maxActiveRfqs: 100,
  createCoalesceMs: 10,
  engine: 'lmdb',
};

type Terminal = Extract<ShardToMain, { kind: 'terminal' }>;

interface Harness {
  clock: ManualClock;
  shard: RfqShard;
  events: ShardToMain[];
  userId: string;
  marketId: number;
}

let dir: string;
let store: Store;

/** The makers these tests quote as, each with more collateral than any fill here locks. */
const makerAddressOf = (makerId: string) => `0x${makerId.padStart(40, '0')}`;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'parlayd-shard-'));
  store = openStore(dir, { isGroupCommit: true });
  const ledger = new Ledger(store, NO_USERS);
  await store.transact(() => {
    for (const makerId of ['m1', 'm2', 'm3'])
      ledger.credit(makerAccount(makerAddressOf(makerId)), 1_000_000_000n, `credit:${makerId}`, START_MS);
  });
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Lets the actor's promises and its group commit (one event-loop turn) run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await nextTurn();
}

/** A shard on a manual clock, a user it funded with 10 wagers, and an open market. */
async function harness(init: Partial<ShardInit> = {}): Promise<Harness> {
  const clock = new ManualClock(START_MS);
  const events: ShardToMain[] = [];
  const durability = new LmdbDurability(store, INIT.shard, INIT.shardCount, clock);
  const shard = new RfqShard(store, durability, { ...INIT, ...init, dataDir: dir }, (e) => events.push(e), clock);
  const userId = randomUUID();
  shard.handle({
    kind: 'money',
    callId: 1,
    op: {
      op: 'credit',
      userId,
      wallet: `0x${'1'.repeat(40)}`,
      amountMicros: String(10 * WAGER),
      idempotencyKey: randomUUID(),
      atMs: START_MS,
    },
  });
  const market = await new Markets(store, clock, { priceAssets: [], priceDurationsSecs: [] }).createMention({
    name: 'm',
    source_kind: 'test',
    source_event_id: 'e',
    source_market_id: randomUUID(),
    betting_closes_at_ms: START_MS + 3_600_000,
  });
  await settle();
  return { clock, shard, events, userId, marketId: market.market_id };
}

function create(h: Harness, overrides: Partial<CreateRfq> = {}): void {
  h.shard.handle({
    kind: 'create',
    callId: 2,
    rfqKind: 'unsigned',
    replayKey: `u:${h.userId}:${randomUUID()}`,
    contentHash: 'c',
    userId: h.userId,
    wallet: `0x${'1'.repeat(40)}`,
    tier: 0,
    legs: [{ marketId: h.marketId, direction: 'up' }],
    wagerMicros: String(WAGER),
    minOddsE4: 15_000,
    toleranceBps: 0,
    orderType: 2,
    isShielded: false,
    expiresAtMs: 0,
    admittedAtMs: START_MS,
    answerWaitMs: 0,
    refusal: null,
    ...overrides,
  });
}

/** The new RFQ's id (from its broadcast), after telling the actor who it went to. */
function announce(h: Harness, makerIds: string[]): { requestId: string; quoteDeadlineMs: number } {
  const broadcast = h.events.find((e) => e.kind === 'broadcast');
  assert.ok(broadcast?.kind === 'broadcast', 'the RFQ was broadcast');
  h.shard.handle({ kind: 'audience', requestId: broadcast.message.request_id, makerIds });
  return { requestId: broadcast.message.request_id, quoteDeadlineMs: broadcast.message.quote_deadline_ms };
}

function quote(h: Harness, requestId: string, makerId: string, odds: number, isLastLook = false): void {
  h.shard.handle({ ...quoteMessage(requestId, makerId, odds, isLastLook), receivedAtMs: h.clock.nowMs() });
}

function quoteMessage(requestId: string, makerId: string, odds: number, isLastLook = false) {
  return {
    kind: 'quote' as const,
    requestId,
    makerId,
    makerAddress: makerAddressOf(makerId),
    quoteId: `q-${makerId}`,
    oddsE4: odds * 10_000,
    maxWagerMicros: String(WAGER),
    isLastLook,
  };
}

/** m1 quotes 2 with a last look, m2 a firm 1.9: every maker answered, so m1 is asked at once. */
async function lastLookOfferedToM1(): Promise<{ h: Harness; requestId: string; lastLook: { deadline_ms: number } }> {
  const h = await harness();
  create(h);
  await settle();
  const { requestId } = announce(h, ['m1', 'm2']);
  quote(h, requestId, 'm1', 2, true);
  quote(h, requestId, 'm2', 1.9);
  await settle();
  const lastLook = framesTo(h, 'm1').find((f) => f.type === 'last_look') as { deadline_ms: number } | undefined;
  assert.ok(lastLook !== undefined, 'm1 was asked its last look');
  return { h, requestId, lastLook };
}

const terminal = (h: Harness): Terminal | undefined => h.events.find((e): e is Terminal => e.kind === 'terminal');
const framesTo = (h: Harness, makerId: string) =>
  h.events
    .filter((e) => e.kind === 'to_maker' && e.makerId === makerId)
    .map((e) => JSON.parse((e as { frame: string }).frame) as { type: string });

describe('shard timing rules on a manual clock', () => {
  it('the quote window closes the RFQ at its deadline, not a millisecond before', async () => {
    const h = await harness();
    create(h);
    await settle();
    const { requestId, quoteDeadlineMs } = announce(h, ['m1', 'm2']);
    assert.equal(quoteDeadlineMs, START_MS + 300);
    quote(h, requestId, 'm1', 2);
    h.clock.advance(299);
    await settle();
    assert.equal(terminal(h), undefined, 'still quoting at 299 ms: m2 has not answered');
    h.clock.advance(1);
    await settle();
    assert.equal(terminal(h)?.result.status, 'completed');
    assert.equal(terminal(h)?.result.odds, 2);
  });

  it('an unsigned RFQ whose one last look runs out at its bound, with a maker silent all along, fails MAKER_REJECTED, not ORDER_EXPIRED', async () => {
    const h = await harness();
    create(h);
    await settle();
    const { requestId } = announce(h, ['m1', 'm2']);
    quote(h, requestId, 'm1', 2, true); // m2 never answers: the window runs to its deadline
    h.clock.advance(300);
    await settle();
    const lastLook = framesTo(h, 'm1').find((f) => f.type === 'last_look') as { deadline_ms: number } | undefined;
    assert.equal(lastLook?.deadline_ms, START_MS + 500);
    h.clock.advance(200);
    await settle();
    assert.deepEqual([terminal(h)?.result.status, terminal(h)?.result.error], ['failed', 'MAKER_REJECTED']);
  });

  it('a signed order that expired on its way from admission is refused ORDER_EXPIRED by the shard, and no maker hears of it', async () => {
    const h = await harness();
    create(h, { rfqKind: 'signed', expiresAtMs: START_MS });
    await settle();
    const created = h.events.find((e) => e.kind === 'created');
    assert.ok(created?.kind === 'created');
    assert.deepEqual(created.outcome.ok ? null : created.outcome.code, 'ORDER_EXPIRED');
    assert.equal(
      h.events.some((e) => e.kind === 'broadcast'),
      false,
    );
  });

  it('every maker of the audience answering closes it at once, whatever the window', async () => {
    const h = await harness();
    create(h);
    await settle();
    const { requestId } = announce(h, ['m1', 'm2']);
    quote(h, requestId, 'm1', 1.6);
    h.shard.handle({ kind: 'decline', requestId, makerId: 'm2' });
    await settle();
    assert.equal(terminal(h)?.result.status, 'completed');
    assert.equal(h.clock.nowMs(), START_MS, 'no time passed');
  });

  it('a last look unanswered for last_look_ms moves to the next quote, at exactly that time', async () => {
    const { h, lastLook } = await lastLookOfferedToM1();
    assert.equal(lastLook.deadline_ms, START_MS + 200, 'asked at once (every maker answered), deadline 200 ms on');
    h.clock.advance(199);
    await settle();
    assert.equal(terminal(h), undefined, 'still waiting for m1 at 199 ms');
    h.clock.advance(1);
    await settle();
    assert.deepEqual([terminal(h)?.result.status, terminal(h)?.result.odds], ['completed', 1.9]);
  });

  it("a quote read after quote_deadline_ms is refused RFQ_CLOSED, though the window's timer has not run yet", async () => {
    const h = await harness();
    create(h);
    await settle();
    const { requestId, quoteDeadlineMs } = announce(h, ['m1', 'm2']);
    quote(h, requestId, 'm1', 2);
    // Read by the main thread 1 ms past the deadline; this thread runs it before its timer (a busy shard).
    h.shard.handle({ ...quoteMessage(requestId, 'm2', 3), receivedAtMs: quoteDeadlineMs + 1 });
    await settle();
    assert.deepEqual(framesTo(h, 'm2'), [{ type: 'quote_reject', request_id: requestId, quote_id: 'q-m2', reason: 'RFQ_CLOSED' }]);
    h.clock.advance(300);
    await settle();
    assert.deepEqual([terminal(h)?.result.status, terminal(h)?.result.odds, terminal(h)?.result.quotes_received], ['completed', 2, 1]);
  });

  it('a last_look_response read after its deadline_ms is LAST_LOOK_NOT_PENDING, and the last look ends as a reject', async () => {
    const { h, requestId, lastLook } = await lastLookOfferedToM1();
    h.shard.handle({
      kind: 'last_look_response',
      requestId,
      makerId: 'm1',
      quoteId: 'q-m1',
      isAccepted: true,
      receivedAtMs: lastLook.deadline_ms + 1,
    });
    await settle();
    assert.equal(terminal(h), undefined, 'the late accept filled nothing');
    const answer = framesTo(h, 'm1').at(-1) as { type: string; code?: string; request_id?: string };
    assert.deepEqual([answer.type, answer.code, answer.request_id], ['error', 'LAST_LOOK_NOT_PENDING', requestId]);
    h.clock.advance(200);
    await settle();
    assert.deepEqual([terminal(h)?.result.status, terminal(h)?.result.odds], ['completed', 1.9]);
  });

  it("a signed order's quote deadline is its expires_at_ms when that comes first; past it a last look is skipped, a plain quote fills", async () => {
    const h = await harness();
    create(h, { rfqKind: 'signed', expiresAtMs: START_MS + 250 });
    await settle();
    const { requestId, quoteDeadlineMs } = announce(h, ['m1', 'm2', 'm3']);
    assert.equal(quoteDeadlineMs, START_MS + 250);
    quote(h, requestId, 'm1', 2, true);
    quote(h, requestId, 'm2', 1.9);
    h.clock.advance(249);
    await settle();
    assert.equal(terminal(h), undefined);
    h.clock.advance(1);
    await settle();
    assert.deepEqual([terminal(h)?.result.status, terminal(h)?.result.odds], ['completed', 1.9]);
    assert.equal(
      framesTo(h, 'm1').some((f) => f.type === 'last_look'),
      false,
      'no maker is asked past the deadline',
    );
  });

  it('no quote at all by the deadline ends timeout, and the wager is released', async () => {
    const h = await harness();
    create(h);
    await settle();
    announce(h, ['m1']);
    h.clock.advance(300);
    await settle();
    assert.equal(terminal(h)?.result.status, 'timeout');
    assert.equal(h.clock.pendingTimers, 0);
  });

  it('a create whose answer waits is held up to create_coalesce_ms, then committed alone', async () => {
    const h = await harness();
    create(h, { answerWaitMs: 5_000 });
    await settle();
    announce(h, ['m1']);
    await settle();
    assert.equal(
      h.events.some((e) => e.kind === 'created'),
      false,
      'held: not committed yet',
    );
    h.clock.advance(9);
    await settle();
    assert.equal(
      h.events.some((e) => e.kind === 'created'),
      false,
      'held at 9 ms',
    );
    h.clock.advance(1);
    await settle();
    const created = h.events.find((e) => e.kind === 'created');
    assert.ok(created?.kind === 'created' && created.outcome.ok && created.outcome.value.result.status === 'pending');
  });
});

/** A quote from socket `makerId` of maker `maker` (m1..m3: one address each, however many sockets). */
function quoteFrom(
  h: Harness,
  requestId: string,
  maker: string,
  makerId: string,
  quoteId: string,
  odds: number,
  isLastLook: boolean,
): void {
  h.shard.handle({
    kind: 'quote',
    requestId,
    makerId,
    makerAddress: makerAddressOf(maker),
    quoteId,
    oddsE4: odds * 10_000,
    maxWagerMicros: String(WAGER),
    isLastLook,
    receivedAtMs: h.clock.nowMs(),
  });
}

const lastLooksSent = (h: Harness) =>
  h.events.flatMap((e) => {
    if (e.kind !== 'to_maker') return [];
    const frame = JSON.parse(e.frame) as { type: string; quote_id?: string; deadline_ms?: number };
    return frame.type === 'last_look' ? [{ makerId: e.makerId, quoteId: frame.quote_id, deadlineMs: frame.deadline_ms }] : [];
  });

describe('last looks are bounded per maker and in time (issue 33 item 7)', () => {
  it('one maker with several sockets is offered 2 last looks on an RFQ in all; then the firm quote fills', async () => {
    const h = await harness();
    create(h, { rfqKind: 'signed', expiresAtMs: START_MS + 60_000 });
    await settle();
    const sockets = ['m1/a', 'm1/b', 'm1/c', 'm1/d'];
    const { requestId } = announce(h, [...sockets, 'm2']);
    for (const [i, makerId] of sockets.entries()) {
      for (let j = 0; j < 4; j++) quoteFrom(h, requestId, 'm1', makerId, `ll-${i}-${j}`, 50 - 4 * i - j, true);
    }
    quoteFrom(h, requestId, 'm2', 'm2', 'firm', 1.9, false);
    await settle();
    h.clock.advance(200);
    await settle();
    assert.equal(terminal(h), undefined, 'the second last look of m1 runs');
    h.clock.advance(200);
    await settle();
    assert.deepEqual(lastLooksSent(h), [
      { makerId: 'm1/a', quoteId: 'll-0-0', deadlineMs: START_MS + 200 },
      { makerId: 'm1/a', quoteId: 'll-0-1', deadlineMs: START_MS + 400 },
    ]);
    assert.deepEqual([terminal(h)?.result.status, terminal(h)?.result.odds], ['completed', 1.9]);
    assert.equal(h.clock.nowMs(), START_MS + 400);
  });

  it('past max_finalizing_ms from the first offer no maker is asked: the running last look ends at the bound, the firm quote fills', async () => {
    const h = await harness({ lastLookMs: 400, maxFinalizingMs: 1_000 });
    create(h, { rfqKind: 'signed', expiresAtMs: START_MS + 60_000 });
    await settle();
    const { requestId } = announce(h, ['m1', 'm2', 'm3', 'm4']);
    quoteFrom(h, requestId, 'm1', 'm1', 'firm', 1.6, false);
    quoteFrom(h, requestId, 'm1', 'm1', 'a', 5, true);
    quoteFrom(h, requestId, 'm2', 'm2', 'b', 4, true);
    quoteFrom(h, requestId, 'm3', 'm3', 'c', 3, true);
    quoteFrom(h, requestId, 'm3', 'm4', 'd', 2.5, true); // m3's second socket: its second offer, were there time
    await settle();
    h.clock.advance(999);
    await settle();
    assert.equal(terminal(h), undefined, 'the third last look runs to the bound');
    h.clock.advance(1);
    await settle();
    assert.deepEqual(lastLooksSent(h), [
      { makerId: 'm1', quoteId: 'a', deadlineMs: START_MS + 400 },
      { makerId: 'm2', quoteId: 'b', deadlineMs: START_MS + 800 },
      { makerId: 'm3', quoteId: 'c', deadlineMs: START_MS + 1_000 },
    ]);
    assert.deepEqual([terminal(h)?.result.status, terminal(h)?.result.odds], ['completed', 1.6], JSON.stringify(terminal(h)));
  });

  it('with no firm quote left at the bound the RFQ fails MAKER_REJECTED, its wager released', async () => {
    const h = await harness({ lastLookMs: 400, maxFinalizingMs: 600 });
    create(h, { rfqKind: 'signed', expiresAtMs: START_MS + 60_000 });
    await settle();
    const { requestId } = announce(h, ['m1', 'm2', 'm3']);
    quoteFrom(h, requestId, 'm1', 'm1', 'a', 5, true);
    quoteFrom(h, requestId, 'm2', 'm2', 'b', 4, true);
    quoteFrom(h, requestId, 'm3', 'm3', 'c', 3, true);
    await settle();
    h.clock.advance(600);
    await settle();
    assert.equal(lastLooksSent(h).length, 2);
    assert.deepEqual([terminal(h)?.result.status, terminal(h)?.result.error], ['failed', 'MAKER_REJECTED']);
    assert.equal(h.clock.pendingTimers, 0);
  });

  it('16 quotes standing per maker address, whichever of its sockets sent them: the 17th is QUOTE_LIMIT', async () => {
    const h = await harness();
    create(h);
    await settle();
    const { requestId } = announce(h, ['m1/a', 'm1/b', 'm2']);
    for (let i = 0; i < 16; i++) quoteFrom(h, requestId, 'm1', i % 2 === 0 ? 'm1/a' : 'm1/b', `q${i}`, 2, false);
    quoteFrom(h, requestId, 'm1', 'm1/b', 'q16', 2, false);
    quoteFrom(h, requestId, 'm2', 'm2', 'other', 2, false); // another maker is not limited by m1's quotes
    const rejects = h.events.flatMap((e) => (e.kind === 'to_maker' && e.frame.includes('"quote_reject"') ? [JSON.parse(e.frame)] : []));
    assert.deepEqual(rejects, [{ type: 'quote_reject', request_id: requestId, quote_id: 'q16', reason: 'QUOTE_LIMIT' }]);
    h.clock.advance(300);
    await settle();
    assert.equal(terminal(h)?.result.quotes_received, 17);
  });
});

describe('facts beside the frames to makers (issue 35): what the desk learns, typed, never parsed', () => {
  it('each frame carries the fact its text states: a refusal or cancel is quote_left (a repeated id none), a last look, the end with what filled; an ack none', async () => {
    const h = await harness();
    create(h);
    await settle();
    const { requestId } = announce(h, ['m1', 'm2', 'm3']);
    quoteFrom(h, requestId, 'm1', 'm1', 'look', 2.5, true);
    quoteFrom(h, requestId, 'm1', 'm1', 'look', 2.5, true); // DUPLICATE_QUOTE_ID: the standing quote stays
    quoteFrom(h, requestId, 'm3', 'm3', 'gone', 2.2, false);
    h.shard.handle({ kind: 'quote_cancel', requestId, makerId: 'm3', quoteId: 'gone' });
    h.shard.handle({ kind: 'quote_cancel', requestId, makerId: 'm3', quoteId: 'never' }); // QUOTE_NOT_FOUND
    quoteFrom(h, requestId, 'm2', 'm2', 'firm', 1.9, false); // every maker answered: quoting closes
    await settle();
    h.shard.handle({
      kind: 'last_look_response',
      requestId,
      makerId: 'm1',
      quoteId: 'look',
      isAccepted: false,
      receivedAtMs: h.clock.nowMs(),
    });
    await settle();
    assert.equal(terminal(h)?.result.status, 'completed');
    // The fields beside the frame: the event less its kind, connection and frame.
    const factOf = (e: Extract<ShardToMain, { kind: 'to_maker' }>) => {
      const { kind: _kind, makerId: _makerId, frame: _frame, ...fact } = e;
      return Object.keys(fact).length === 0 ? null : fact;
    };
    const sent = h.events.flatMap((e) =>
      e.kind === 'to_maker' ? [{ makerId: e.makerId, type: (JSON.parse(e.frame) as { type: string }).type, fact: factOf(e) }] : [],
    );
    const ended = (filledQuoteId: string | null) => ({
      fact: 'rfq_ended',
      requestId,
      filledQuoteId,
      filledWagerMicros: filledQuoteId === null ? null : String(WAGER),
    });
    assert.deepEqual(sent, [
      { makerId: 'm1', type: 'quote_ack', fact: null },
      { makerId: 'm1', type: 'quote_reject', fact: null },
      { makerId: 'm3', type: 'quote_ack', fact: null },
      { makerId: 'm3', type: 'quote_cancelled', fact: { fact: 'quote_left', requestId, quoteId: 'gone' } },
      { makerId: 'm3', type: 'error', fact: null },
      { makerId: 'm2', type: 'quote_ack', fact: null },
      { makerId: 'm1', type: 'last_look', fact: { fact: 'last_look', requestId, quoteId: 'look' } },
      { makerId: 'm1', type: 'rfq_result', fact: ended(null) },
      { makerId: 'm3', type: 'rfq_result', fact: ended(null) },
      { makerId: 'm2', type: 'rfq_result', fact: ended('firm') },
    ]);
    // A refusal by the shard takes the quote out of the book.
    quoteFrom(h, requestId, 'm2', 'm2', 'after', 1.9, false);
    const last = h.events.at(-1);
    assert.ok(last?.kind === 'to_maker');
    assert.equal((JSON.parse(last.frame) as { reason: string }).reason, 'RFQ_CLOSED');
    assert.deepEqual(factOf(last), { fact: 'quote_left', requestId, quoteId: 'after' });
  });
});

describe('a fill refused UNCOVERED while it was written goes on with the quotes that still stand', () => {
  // A maker whose collateral covers one fill at odds 2 (a liability of one wager), not two. R1 and R2 close in
  // one turn, each filling it first: R1's fill takes the collateral, so R2's is refused in its commit
  // (UNCOVERED) and selection goes on to m2's 1.9. What m2 did while R2's fill was written must count.
  let limitedMakers = 0;

  /** Two RFQs quoted, closed in one turn; `during` runs while R2's first fill is on its way to durability. */
  async function twoFillsOneCollateral(during: (h: Harness, r2: string) => void) {
    const LIMITED = `m9${limitedMakers++}`;
    const ledger = new Ledger(store, NO_USERS);
    await store.transact(() =>
      ledger.credit(makerAccount(makerAddressOf(LIMITED)), BigInt(WAGER + WAGER / 2), `credit:${LIMITED}`, START_MS),
    );
    const h = await harness();
    create(h);
    create(h);
    await settle();
    const [r1, r2] = h.events.flatMap((e) => (e.kind === 'broadcast' ? [e.message.request_id] : []));
    assert.ok(r1 !== undefined && r2 !== undefined);
    h.shard.handle({ kind: 'audience', requestId: r1, makerIds: [LIMITED] });
    h.shard.handle({ kind: 'audience', requestId: r2, makerIds: [LIMITED, 'm2'] });
    quote(h, r2, 'm2', 1.9);
    quote(h, r1, LIMITED, 2); // R1 closes: its fill is being written
    quote(h, r2, LIMITED, 2); // R2 closes: m9 still covers as committed state reads, so its fill is written too
    during(h, r2);
    await settle();
    const ends = new Map(h.events.flatMap((e) => (e.kind === 'terminal' ? [[e.result.request_id, e.result] as const] : [])));
    return { h, r1: ends.get(r1), r2: ends.get(r2) };
  }

  it('without anything in between, R2 fills m2 (the control: the refusal happened)', async () => {
    const { r1, r2 } = await twoFillsOneCollateral(() => {});
    assert.equal(r1?.status, 'completed');
    assert.deepEqual([r2?.status, r2?.odds], ['completed', 1.9]);
  });

  it("m2's socket closing meanwhile withdraws its quote: R2 fails for want of liquidity, never filled by m2", async () => {
    const { r1, r2 } = await twoFillsOneCollateral((h) => h.shard.handle({ kind: 'maker_disconnected', makerId: 'm2' }));
    assert.equal(r1?.status, 'completed');
    assert.deepEqual([r2?.status, r2?.error], ['failed', 'INSUFFICIENT_LIQUIDITY']);
  });

  it("m2's quote_cancel meanwhile is honoured (quote_cancelled), and a status read shows R2 finalizing with its quotes", async () => {
    const { h, r2 } = await twoFillsOneCollateral((h, requestId) => {
      h.shard.handle({ kind: 'quote_cancel', requestId, makerId: 'm2', quoteId: 'q-m2' });
      h.shard.handle({ kind: 'status', callId: 9, requestId, userId: h.userId });
    });
    assert.deepEqual([r2?.status, r2?.error], ['failed', 'INSUFFICIENT_LIQUIDITY']);
    assert.ok(
      framesTo(h, 'm2').some((f) => f.type === 'quote_cancelled'),
      JSON.stringify(framesTo(h, 'm2')),
    );
    const status = h.events.find((e) => e.kind === 'status');
    assert.ok(status?.kind === 'status' && status.outcome.ok);
    const read = status.outcome.value as { status: string; quotes_received: number };
    assert.deepEqual([read.status, read.quotes_received], ['finalizing', 2]);
  });
});
