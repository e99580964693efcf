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
import { makerAccount } from '../../src/ledger/accounts.js';
import { Ledger, NO_USERS } from '../../src/ledger/ledger.js';
import { Markets } from '../../src/markets/markets.js';
import type { CreateRfq, ShardInit, ShardToMain } from '../../src/rfq/messages.js';
import { RfqShard } from '../../src/rfq/shard.js';
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
  maxActiveRfqs: 100,
  createCoalesceMs: 10,
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
async function harness(): Promise<Harness> {
  const clock = new ManualClock(START_MS);
  const events: ShardToMain[] = [];
  const shard = new RfqShard(store, { ...INIT, dataDir: dir }, (e) => events.push(e), clock);
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
  h.shard.handle({
    kind: 'quote',
    requestId,
    makerId,
    makerAddress: makerAddressOf(makerId),
    quoteId: `q-${makerId}`,
    oddsE4: odds * 10_000,
    maxWagerMicros: String(WAGER),
    isLastLook,
    receivedAtMs: 0,
  });
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
    const h = await harness();
    create(h);
    await settle();
    const { requestId } = announce(h, ['m1', 'm2']);
    quote(h, requestId, 'm1', 2, true);
    quote(h, requestId, 'm2', 1.9);
    await settle();
    const lastLook = framesTo(h, 'm1').find((f) => f.type === 'last_look') as { deadline_ms: number } | undefined;
    assert.equal(lastLook?.deadline_ms, START_MS + 200, 'asked at once (every maker answered), deadline 200 ms on');
    h.clock.advance(199);
    await settle();
    assert.equal(terminal(h), undefined, 'still waiting for m1 at 199 ms');
    h.clock.advance(1);
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
