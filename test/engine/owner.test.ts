// The engine's owner actor, input by input (src/engine/owner.ts): local and two-phase fills, a lock refused,
// a grant that comes too late, a lock whose fill's owner restarted, channels that repeat and lose commands,
// credits routed by key; a call's facts journaled with its money; the journal and snapshot codecs; and the
// cross-owner check failing when it must.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { creditRef, lockRef, makerAccount, poolRef, PROTOCOL, userAccount, type AccountId } from '../../src/records/ledger.js';
import { Book } from '../../src/engine/book.js';
import { checkOwners } from '../../src/engine/check.js';
import { decodeEffects, decodeSnapshot, encodeEffects, encodeSnapshot } from '../../src/engine/codec.js';
import type { Effect } from '../../src/engine/effects.js';
import { MoneyOwner, type Output, type PeerMessage, type Step } from '../../src/engine/owner.js';
import type { MoneyCall } from '../../src/ledger/money-ops.js';
import type { BlindWrite } from '../../src/store/records.js';

const LIMITS = { lockTimeoutMs: 100, lockQueryMs: 200, resendMs: 50, resendPerTick: 16 };
const TAKER = 'u-taker';
const MAKER = '0x' + 'ab'.repeat(20);
const T0 = 1_000_000;

/** Two owners: the taker, every credit key and the protocol on 0; the maker on 1 (or on 0 when `isLocal`). */
function owners(isLocal = false) {
  const ownerOf = (account: AccountId) => (account === makerAccount(MAKER) && !isLocal ? 1 : 0);
  const hosts = [0, 1].map((self) => ({ owner: new MoneyOwner(new Book(self, ownerOf), LIMITS), records: [] as Effect[][] }));
  const run = (index: number, step: Step): Output[] => {
    if (step.effects.length > 0) hosts[index]!.records.push(step.effects);
    return step.outputs;
  };
  /** `requestId`: a call from across the network (owner.ts MoneyOwner.call). */
  const call = (index: number, body: MoneyCall, callId = 1, nowMs = T0, requestId?: string) =>
    run(index, hosts[index]!.owner.call(callId, body, nowMs, [], requestId));
  const peer = (index: number, from: number, message: PeerMessage, nowMs = T0) =>
    run(index, hosts[index]!.owner.peer(from, message, nowMs));
  const tick = (index: number, nowMs: number) => run(index, hosts[index]!.owner.tick(nowMs));
  const book = (index: number) => hosts[index]!.owner.book;
  const check = () => checkOwners(hosts.map(({ owner, records }) => ({ book: owner.book, records })));
  return { hosts, call, peer, tick, book, check, ownerOf };
}

/** The only peer message among outputs (asserted), to deliver by hand. */
function onlyPeer(outputs: Output[]): { owner: number; message: PeerMessage } {
  const peers = outputs.filter((o) => o.to === 'peer');
  assert.equal(
    peers.length,
    1,
    JSON.stringify(outputs, (_k, v) => (typeof v === 'bigint' ? String(v) : v)),
  );
  return peers[0] as { owner: number; message: PeerMessage };
}

function funded(isLocal = false) {
  const world = owners(isLocal);
  world.call(0, { op: 'credit', account: userAccount(TAKER), amountMicros: 1_000n, key: 'fund-taker' });
  const makerCredit = world.call(0, { op: 'credit', account: makerAccount(MAKER), amountMicros: 5_000n, key: 'fund-maker' });
  if (!isLocal) world.peer(0, 1, onlyPeer(world.peer(1, 0, onlyPeer(makerCredit).message)).message); // to the maker's owner, and acknowledged
  world.call(0, { op: 'reserve', userId: TAKER, amountMicros: 600n, ref: 'rfq:1' });
  return world;
}

test('a fill whose maker lives on the same owner moves both sides at once, and settles both', () => {
  const w = funded(true);
  const outputs = w.call(0, { op: 'fill', ref: 'rfq:1', filledMicros: 500n, makerAddress: MAKER, liabilityMicros: 700n }, 9);
  assert.deepEqual(outputs, [{ to: 'client', callId: 9, answer: { ok: true } }]);
  assert.equal(w.book(0).bucket(userAccount(TAKER), 'at_risk'), 500n);
  assert.equal(w.book(0).available(userAccount(TAKER)), 500n); // 1,000 − 600 reserved + 100 unfilled back
  assert.equal(w.book(0).bucket(makerAccount(MAKER), 'locked'), 700n);
  w.call(0, { op: 'settle', ref: 'rfq:1', makerAddress: MAKER, outcome: 'won' });
  assert.equal(w.book(0).available(userAccount(TAKER)), 500n + 1_200n);
  assert.equal(w.book(0).available(makerAccount(MAKER)), 5_000n - 700n);
  assert.deepEqual(w.call(0, { op: 'settle', ref: 'rfq:1', makerAddress: MAKER, outcome: 'won' }), [
    { to: 'client', callId: 1, answer: { ok: true, isMoved: false } },
  ]);
  assert.deepEqual(w.check().differences, []);
});

test('a fill whose maker lives elsewhere: lock, fill, post; then the settlement pays the taker from the other owner', () => {
  const w = funded();
  const ask = onlyPeer(w.call(0, { op: 'fill', ref: 'rfq:1', filledMicros: 500n, makerAddress: MAKER, liabilityMicros: 700n }, 9));
  assert.equal(ask.owner, 1);
  assert.equal(ask.message.m, 'lock');
  assert.equal(w.book(0).bucket(userAccount(TAKER), 'at_risk'), 0n, 'nothing moves before the lock');
  const grant = onlyPeer(w.peer(1, 0, ask.message));
  assert.deepEqual(grant.message, { m: 'lock_reply', key: `${lockRef('rfq:1')}#1`, isGranted: true });
  assert.equal(w.book(1).bucket(makerAccount(MAKER), 'locked'), 700n);
  assert.ok(w.book(1).holds.get(`${lockRef('rfq:1')}#1`)?.pendingFor !== undefined);
  const afterGrant = w.peer(0, 1, grant.message);
  assert.deepEqual(
    afterGrant.filter((o) => o.to === 'client'),
    [{ to: 'client', callId: 9, answer: { ok: true } }],
  );
  assert.equal(w.book(0).bucket(userAccount(TAKER), 'at_risk'), 500n);
  const post = onlyPeer(afterGrant);
  assert.equal(post.message.m, 'command');
  const ack = onlyPeer(w.peer(1, 0, post.message));
  assert.deepEqual(ack.message, { m: 'ack', seq: 2 }); // seq 1 was the maker's credit
  assert.equal(w.book(1).holds.get(lockRef('rfq:1'))?.amountMicros, 700n, 'the lock is the position’s now');
  w.peer(0, 1, ack.message);
  assert.equal(w.book(0).outbox(1).entries.length, 0);

  const settle = onlyPeer(w.call(0, { op: 'settle', ref: 'rfq:1', makerAddress: MAKER, outcome: 'won' }));
  const pay = onlyPeer(w.peer(1, 0, settle.message).filter((o) => o.to === 'peer' && o.message.m === 'command'));
  assert.equal(w.book(1).bucket(makerAccount(MAKER), 'locked'), 0n);
  const inTransit = w.check();
  assert.equal(inTransit.inTransitMicros, 700n, 'the liability is on its way to the taker');
  assert.deepEqual(inTransit.differences, []);
  w.peer(0, 1, pay.message);
  assert.equal(w.book(0).available(userAccount(TAKER)), 500n + 500n + 700n);
  const done = w.check();
  assert.equal(done.inTransitMicros, 0n);
  assert.deepEqual(done.differences, []);
});

test('a lock the maker cannot cover is refused: UNCOVERED, and the reservation stays for the next quote', () => {
  const w = funded();
  const ask = onlyPeer(w.call(0, { op: 'fill', ref: 'rfq:1', filledMicros: 500n, makerAddress: MAKER, liabilityMicros: 9_000n }, 9));
  const refusal = onlyPeer(w.peer(1, 0, ask.message));
  assert.deepEqual(w.peer(0, 1, refusal.message), [{ to: 'client', callId: 9, answer: { ok: false, code: 'UNCOVERED' } }]);
  assert.equal(w.book(0).holds.get('rfq:1')?.bucket, 'reserved');
  assert.equal(w.book(1).available(makerAccount(MAKER)), 5_000n);
  // The next quote's lock is another attempt, under a key of its own: the refused one left nothing to reuse.
  const retry = onlyPeer(w.call(0, { op: 'fill', ref: 'rfq:1', filledMicros: 500n, makerAddress: MAKER, liabilityMicros: 700n }, 10));
  assert.ok(retry.message.m === 'lock' && ask.message.m === 'lock' && retry.message.key !== ask.message.key, 'a new key per attempt');
  const afterGrant = w.peer(0, 1, onlyPeer(w.peer(1, 0, retry.message)).message);
  assert.deepEqual(
    afterGrant.filter((o) => o.to === 'client'),
    [{ to: 'client', callId: 10, answer: { ok: true } }],
  );
  w.peer(1, 0, onlyPeer(afterGrant).message);
  assert.equal(w.book(1).holds.get(lockRef('rfq:1'))?.amountMicros, 700n);
  assert.deepEqual(w.check().differences, []);
});

test('a grant that arrives after the fill timed out is voided: the maker gets its liability back', () => {
  const w = funded();
  const ask = onlyPeer(w.call(0, { op: 'fill', ref: 'rfq:1', filledMicros: 500n, makerAddress: MAKER, liabilityMicros: 700n }, 9));
  assert.deepEqual(w.tick(0, T0 + LIMITS.lockTimeoutMs), [{ to: 'client', callId: 9, answer: { ok: false, code: 'OWNER_UNAVAILABLE' } }]);
  const grant = onlyPeer(w.peer(1, 0, ask.message));
  const voiding = onlyPeer(w.peer(0, 1, grant.message));
  assert.equal(voiding.message.m === 'command' && voiding.message.command.c, 'void_lock');
  w.peer(1, 0, voiding.message);
  assert.equal(w.book(1).available(makerAccount(MAKER)), 5_000n);
  assert.equal(w.book(1).holds.size, 0);
  assert.equal(w.book(0).bucket(userAccount(TAKER), 'at_risk'), 0n);
  assert.deepEqual(w.check().differences, []);
});

test('a pending lock is voided only once the fill’s owner says the fill will never be (it restarted), not while in flight', () => {
  const w = funded();
  const ask = onlyPeer(w.call(0, { op: 'fill', ref: 'rfq:1', filledMicros: 500n, makerAddress: MAKER, liabilityMicros: 700n }, 9));
  w.peer(1, 0, ask.message); // granted; the grant is lost
  const question = onlyPeer(w.tick(1, T0 + LIMITS.lockQueryMs));
  assert.equal(question.message.m, 'fate');
  assert.deepEqual(onlyPeer(w.peer(0, 1, question.message)).message, { m: 'fate_reply', key: `${lockRef('rfq:1')}#1`, isVoided: false });
  // The taker's owner restarts: same durable state, nothing in flight; its RFQs are failed.
  w.hosts[0]!.owner = new MoneyOwner(w.book(0), LIMITS);
  w.hosts[0]!.owner.recoverInterrupted(T0 + 1);
  const answer = onlyPeer(w.peer(0, 1, question.message));
  assert.deepEqual(answer.message, { m: 'fate_reply', key: `${lockRef('rfq:1')}#1`, isVoided: true });
  w.peer(1, 0, answer.message, T0 + LIMITS.lockQueryMs);
  assert.equal(w.book(1).available(makerAccount(MAKER)), 5_000n);
  assert.equal(w.book(0).available(userAccount(TAKER)), 1_000n, 'the interrupted RFQ’s reservation went back');
});

test('a pending lock is asked about once per lockQueryMs, not at every tick, while its fill’s owner stays silent', () => {
  const w = funded();
  const fates = (atMs: number) => w.tick(1, atMs).filter((o) => o.to === 'peer' && o.message.m === 'fate').length;
  assert.equal(fates(T0 - 1), 0, "the maker's owner has ticked since it started: nothing pending yet");
  const ask = onlyPeer(w.call(0, { op: 'fill', ref: 'rfq:1', filledMicros: 500n, makerAddress: MAKER, liabilityMicros: 700n }, 9));
  w.peer(1, 0, ask.message); // granted; the grant is lost, and so is every question below
  assert.equal(fates(T0 + LIMITS.lockQueryMs - 1), 0, 'not old enough yet');
  assert.equal(fates(T0 + LIMITS.lockQueryMs), 1);
  for (let ms = 20; ms < LIMITS.lockQueryMs; ms += 20) assert.equal(fates(T0 + LIMITS.lockQueryMs + ms), 0, `asked again ${ms} ms later`);
  assert.equal(fates(T0 + 2 * LIMITS.lockQueryMs), 1, 'asked again once lockQueryMs passed');
  assert.equal(fates(T0 + 2 * LIMITS.lockQueryMs + 20), 0);
});

test('an owner asks about every lock pending at its first tick at once, however young (the locks of the run before a restart)', () => {
  const w = funded();
  const ask = onlyPeer(w.call(0, { op: 'fill', ref: 'rfq:1', filledMicros: 500n, makerAddress: MAKER, liabilityMicros: 700n }, 9));
  w.peer(1, 0, ask.message); // granted before the maker's owner ever ticked: as a lock recovered from its journal is
  const fates = (atMs: number) => w.tick(1, atMs).filter((o) => o.to === 'peer' && o.message.m === 'fate').length;
  assert.equal(fates(T0 + 1), 1, 'asked at the first tick, 1 ms after the lock');
  assert.equal(fates(T0 + 2), 0, 'then once per lockQueryMs, as any other');
  assert.equal(fates(T0 + 1 + LIMITS.lockQueryMs), 1);
});

test('a channel applies each command once, in order: a repeat is acknowledged again, one past a gap waits', () => {
  const w = funded();
  const credit = w.call(0, { op: 'credit', account: makerAccount(MAKER), amountMicros: 10n, key: 'k2' });
  const second = onlyPeer(credit).message;
  assert.ok(second.m === 'command' && second.seq === 2);
  const third = onlyPeer(w.call(0, { op: 'credit', account: makerAccount(MAKER), amountMicros: 20n, key: 'k3' })).message;
  assert.deepEqual(w.peer(1, 0, third), [], 'past a gap: not applied, not acknowledged');
  assert.equal(w.book(1).available(makerAccount(MAKER)), 5_000n);
  assert.deepEqual(onlyPeer(w.peer(1, 0, second)).message, { m: 'ack', seq: 2 });
  assert.deepEqual(onlyPeer(w.peer(1, 0, second)).message, { m: 'ack', seq: 2 }, 'a repeat');
  assert.equal(w.book(1).available(makerAccount(MAKER)), 5_010n);
  // The sender resends what is unacknowledged once `resendMs` passed since its acknowledgements last moved.
  w.peer(0, 1, { m: 'ack', seq: 2 });
  const resent = onlyPeer(w.tick(0, T0 + LIMITS.resendMs)).message;
  assert.deepEqual(resent, third);
  w.peer(1, 0, resent);
  assert.equal(w.book(1).available(makerAccount(MAKER)), 5_030n);
});

test('a lost command is resent while the sender keeps sending: new sends, each dropped past the gap, do not hold the resend off', () => {
  const w = funded();
  // Lost on its way (the receiver restarted before it was durable): everything after it waits past the gap.
  w.call(0, { op: 'credit', account: makerAccount(MAKER), amountMicros: 1n, key: 'lost' });
  let nowMs = T0;
  for (let i = 0; i < 20; i++) {
    nowMs += LIMITS.resendMs / 2; // a send every half resend interval, and a tick with each
    const outputs = [
      ...w.call(0, { op: 'credit', account: makerAccount(MAKER), amountMicros: 1n, key: `k${i}` }, 1, nowMs),
      ...w.tick(0, nowMs),
    ];
    for (const output of outputs) {
      if (output.to !== 'peer') continue;
      for (const reply of w.peer(1, 0, output.message, nowMs)) if (reply.to === 'peer') w.peer(0, 1, reply.message, nowMs);
    }
  }
  // 21 credits of 1 reached the maker's owner, in order, and the sender's outbox is empty: all acknowledged.
  assert.equal(w.book(1).available(makerAccount(MAKER)), 5_021n);
  assert.equal(w.book(0).outbox(1).entries.length, 0);
  assert.deepEqual(w.check().differences, []);
});

test('credits: decided by the key’s owner; a replay moves nothing, other content is a conflict', () => {
  const w = owners(true);
  const body: MoneyCall = { op: 'credit', account: userAccount(TAKER), amountMicros: 50n, key: 'k' };
  assert.deepEqual(w.call(0, body), [{ to: 'client', callId: 1, answer: { ok: true, isReplay: false } }]);
  assert.deepEqual(w.call(0, body), [{ to: 'client', callId: 1, answer: { ok: true, isReplay: true } }]);
  assert.deepEqual(w.call(0, { ...body, amountMicros: 51n }), [
    { to: 'client', callId: 1, answer: { ok: false, code: 'IDEMPOTENCY_CONFLICT' } },
  ]);
  assert.equal(w.book(0).available(userAccount(TAKER)), 50n);
  assert.equal(w.ownerOf(creditRef('k')), 0);
  assert.throws(() => w.call(1, { ...body, key: 'k4' }), /decided by owner 1, not its owner/);
});

test('journal records and snapshots round-trip bigints, and only amounts: a key that looks like a number stays a string', () => {
  const w = funded();
  w.call(0, { op: 'credit', account: userAccount('7'), amountMicros: 12_345_678_901_234_567_890n, key: '42' });
  for (const record of w.hosts[0]!.records) assert.deepEqual(decodeEffects(encodeEffects(record)), record);
  const { book, seq } = decodeSnapshot(encodeSnapshot(w.book(0), 17), w.ownerOf);
  assert.equal(seq, 17);
  assert.deepEqual(book.accounts, w.book(0).accounts);
  assert.deepEqual(book.holds, w.book(0).holds);
  assert.deepEqual(book.creditKeys, w.book(0).creditKeys);
  assert.deepEqual(book.outboxes, w.book(0).outboxes);
  assert.ok(book.creditKeys.has('42'));
});

test('the check fails on a bucket its transfers do not explain, a transfer applied twice, and holds that differ', () => {
  const w = funded(true);
  assert.deepEqual(w.check().differences, []);
  w.book(0).accounts.get(userAccount(TAKER))!.available! += 1n;
  const [reserve] = w.hosts[0]!.records.at(-1)!;
  w.hosts[0]!.records.push([reserve!]);
  w.book(0).holds.get('rfq:1')!.amountMicros -= 1n;
  const { differences, isOk } = w.check();
  assert.equal(isOk, false);
  assert.ok(differences.some((d) => /available: state/.test(d)));
  assert.ok(differences.some((d) => /applied more than once/.test(d)));
  assert.ok(differences.some((d) => /reserved is \d+, its holds/.test(d)));
  assert.ok(differences.some((d) => /not conserved/.test(d)));
});

test('a contest on two owners: stakes collected into the protocol’s pool, a prize paid back across, the pool closed only once every stake arrived', () => {
  // The protocol on owner 0, the entrant on owner 1.
  const ownerOf = (account: AccountId) => (account === userAccount('entrant') ? 1 : 0);
  const [protocol, entrants] = [0, 1].map((self) => new MoneyOwner(new Book(self, ownerOf), LIMITS)) as [MoneyOwner, MoneyOwner];
  const peerOf = (outputs: Output[]) => onlyPeer(outputs).message;
  protocol.call(1, { op: 'credit', account: PROTOCOL, amountMicros: 1_000n, key: 'p' }, T0);
  entrants.peer(
    0,
    peerOf(protocol.call(1, { op: 'credit', account: userAccount('entrant'), amountMicros: 300n, key: 'e' }, T0).outputs),
    T0,
  );
  assert.deepEqual(protocol.call(2, { op: 'open_pool', contestId: 'c', amountMicros: 400n }, T0).outputs, [
    { to: 'client', callId: 2, answer: { ok: true, isReplay: false } },
  ]);
  entrants.call(3, { op: 'reserve', userId: 'entrant', amountMicros: 200n, ref: 'contest:c:entrant:0' }, T0);
  const collected = entrants.call(4, { op: 'collect', contestId: 'c', ref: 'contest:c:entrant:0' }, T0);
  assert.deepEqual(
    collected.outputs.filter((o) => o.to === 'client'),
    [{ to: 'client', callId: 4, answer: { ok: true, isMoved: true } }],
  );
  const close = { op: 'close_pool', contestId: 'c', expectedMicros: 400n + 200n - 450n } as const;
  const prize = { op: 'pay_prize', contestId: 'c', ref: 'contest:c:entrant:0', userId: 'entrant', amountMicros: 450n } as const;
  assert.deepEqual(protocol.call(5, prize, T0).outputs, [{ to: 'client', callId: 5, answer: { ok: false, code: 'POOL_SHORT' } }]);
  protocol.peer(1, peerOf(collected.outputs), T0); // the stake arrives: the pot is 600
  assert.equal(protocol.book.holds.get(poolRef('c'))?.amountMicros, 600n);
  const paid = protocol.call(6, prize, T0).outputs;
  assert.deepEqual(protocol.call(7, prize, T0).outputs, [{ to: 'client', callId: 7, answer: { ok: true, isMoved: false } }], 'paid once');
  entrants.peer(0, peerOf(paid), T0);
  assert.equal(entrants.book.available(userAccount('entrant')), 100n + 450n);
  assert.deepEqual(protocol.call(8, { ...close, expectedMicros: 151n }, T0).outputs, [
    { to: 'client', callId: 8, answer: { ok: false, code: 'POOL_SHORT' } },
  ]);
  protocol.call(9, close, T0);
  assert.equal(protocol.book.available(PROTOCOL), 1_000n - 400n + 150n);
  assert.equal(protocol.book.holds.size, 0);
  assert.equal(protocol.book.prizesPaid.size, 0, 'forgotten with the pool');
});

test('a call’s facts are journaled with its money: when it succeeds, with a remote fill’s commit, with a restart’s release, never when refused', () => {
  const w = funded();
  const owner = w.hosts[0]!.owner;
  const facts = (id: string): BlindWrite[] => [
    { db: 'rfqKeys', key: `key-${id}`, value: { requestId: id, contentHash: 'h' } },
    { db: 'rfqActive', key: id, value: undefined },
  ];
  const factsOf = (step: Step) => step.effects.flatMap((effect) => (effect.t === 'fact' ? [effect.write] : []));
  const refused = owner.call(2, { op: 'reserve', userId: TAKER, amountMicros: 10_000n, ref: 'rfq:2' }, T0, facts('r2'));
  assert.deepEqual(refused.effects, []);
  const reserved = owner.call(3, { op: 'reserve', userId: TAKER, amountMicros: 100n, ref: 'rfq:3' }, T0, facts('r3'));
  assert.deepEqual(factsOf(reserved), facts('r3'));
  assert.deepEqual(decodeEffects(encodeEffects(reserved.effects)), reserved.effects, 'a fact round-trips, a remove too');

  const asked = owner.call(
    4,
    { op: 'fill', ref: 'rfq:1', filledMicros: 500n, makerAddress: MAKER, liabilityMicros: 700n },
    T0,
    facts('r1'),
  );
  assert.deepEqual(factsOf(asked), [], 'nothing before the lock');
  const grant = onlyPeer(w.peer(1, 0, onlyPeer(asked.outputs).message));
  const committed = owner.peer(1, grant.message, T0);
  assert.deepEqual(factsOf(committed), facts('r1'));
  assert.ok(
    committed.effects.some((effect) => effect.t === 'transfer' && effect.transfer.kind === 'fill'),
    'in the fill’s own record',
  );

  // A restart: the interrupted RFQ's reservation goes back with the records that say it failed.
  const restarted = new MoneyOwner(owner.book, LIMITS);
  const recovered = restarted.recoverInterrupted(T0 + 1, (ref) => facts(`ended-${ref}`));
  assert.deepEqual(factsOf(recovered), facts('ended-rfq:3'), 'only rfq:3 was still reserved (rfq:1 filled)');
  assert.ok(
    recovered.effects.some((effect) => effect.t === 'transfer' && effect.transfer.kind === 'release' && effect.transfer.ref === 'rfq:3'),
  );
});

test('the same call again, as a transport across machines may send it, is answered as the first and moves nothing', () => {
  const w = funded(); // rfq:1 reserved (600) on owner 0, the maker on owner 1
  const again = { ok: true, isReplay: true, isMoved: false };
  assert.deepEqual(w.call(0, { op: 'reserve', userId: TAKER, amountMicros: 600n, ref: 'rfq:1' }), [
    { to: 'client', callId: 1, answer: again },
  ]);
  assert.deepEqual(w.call(0, { op: 'reserve', userId: TAKER, amountMicros: 601n, ref: 'rfq:1' }), [
    { to: 'client', callId: 1, answer: { ok: false, code: 'IDEMPOTENCY_CONFLICT' } },
  ]);
  assert.equal(w.book(0).bucket(userAccount(TAKER), 'reserved'), 600n);

  // A fill sent twice while its lock is asked: one lock, and both calls get the fill's answer.
  const fill: MoneyCall = { op: 'fill', ref: 'rfq:1', filledMicros: 500n, makerAddress: MAKER, liabilityMicros: 700n };
  const ask = onlyPeer(w.call(0, fill, 9));
  assert.deepEqual(w.call(0, fill, 10), [], 'no second lock asked');
  assert.deepEqual(w.call(0, { ...fill, liabilityMicros: 701n }, 11), [
    { to: 'client', callId: 11, answer: { ok: false, code: 'IDEMPOTENCY_CONFLICT' } },
  ]);
  const afterGrant = w.peer(0, 1, onlyPeer(w.peer(1, 0, ask.message)).message);
  assert.deepEqual(
    afterGrant.filter((o) => o.to === 'client'),
    [9, 10].map((callId) => ({ to: 'client', callId, answer: { ok: true } })),
  );
  w.peer(0, 1, onlyPeer(w.peer(1, 0, onlyPeer(afterGrant).message)).message); // post_lock and its ack
  // Once committed, the same fill again is a replay; a fill of no reservation is refused, not thrown.
  assert.deepEqual(w.call(0, fill, 12), [{ to: 'client', callId: 12, answer: again }]);
  assert.deepEqual(w.call(0, { ...fill, ref: 'rfq:none' }, 13), [{ to: 'client', callId: 13, answer: { ok: false, code: 'ABORTED' } }]);
  assert.equal(w.book(1).bucket(makerAccount(MAKER), 'locked'), 700n, 'locked once');
  assert.equal(w.book(0).bucket(userAccount(TAKER), 'at_risk'), 500n, 'filled once');

  w.call(0, { op: 'credit', account: userAccount(TAKER), amountMicros: 50n, key: 'more' });
  const withdraw: MoneyCall = { op: 'withdraw', account: userAccount(TAKER), amountMicros: 40n, ref: 'withdrawal:1' };
  assert.deepEqual(w.call(0, withdraw), [{ to: 'client', callId: 1, answer: { ok: true } }]);
  assert.deepEqual(w.call(0, withdraw), [{ to: 'client', callId: 1, answer: again }]);
  assert.equal(w.book(0).bucket(userAccount(TAKER), 'pending_withdrawal'), 40n);
  assert.deepEqual(w.check().differences, []);
});

test('a call from across the network sent again is told its first answer, a refusal included, even after the state changed or the owner restarted', () => {
  const w = owners(true);
  const records = w.hosts[0]!.records;
  const reserve: MoneyCall = { op: 'reserve', userId: TAKER, amountMicros: 600n, ref: 'rfq:1' };
  const refusal = { ok: false, code: 'INSUFFICIENT_BALANCE' };
  assert.deepEqual(w.call(0, reserve, 1, T0, 'req-1'), [{ to: 'client', callId: 1, answer: refusal }]);
  assert.deepEqual(records.at(-1), [{ t: 'reply', id: 'req-1', answer: refusal }], 'the refusal is journaled');
  w.call(0, { op: 'credit', account: userAccount(TAKER), amountMicros: 1_000n, key: 'fund-taker' });
  // The repeat, sent before the refusal reached its caller, finds the money there now: still refused, as the caller heard.
  const journaled = records.length;
  assert.deepEqual(w.call(0, reserve, 2, T0, 'req-1'), [{ to: 'client', callId: 2, answer: refusal }]);
  assert.equal(records.length, journaled, 'a repeat journals nothing');
  assert.equal(w.book(0).bucket(userAccount(TAKER), 'reserved'), 0n);

  // Taken, then released at a restart (its RFQ interrupted): the repeat is told "taken" and takes nothing again.
  assert.deepEqual(w.call(0, reserve, 3, T0, 'req-2'), [{ to: 'client', callId: 3, answer: { ok: true } }]);
  const restarted = new MoneyOwner(w.book(0), LIMITS);
  const take = (step: Step) => {
    if (step.effects.length > 0) records.push(step.effects);
    return step.outputs;
  };
  take(restarted.recoverInterrupted(T0 + 1));
  assert.deepEqual(take(restarted.call(4, reserve, T0 + 2, [], 'req-2')), [{ to: 'client', callId: 4, answer: { ok: true } }]);
  assert.equal(w.book(0).bucket(userAccount(TAKER), 'reserved'), 0n, 'not reserved again under its reference');
  const fill: MoneyCall = { op: 'fill', ref: 'rfq:1', filledMicros: 500n, makerAddress: MAKER, liabilityMicros: 0n };
  assert.deepEqual(take(restarted.call(5, fill, T0 + 3, [], 'req-3')), [
    { to: 'client', callId: 5, answer: { ok: false, code: 'ABORTED' } },
  ]);

  const { book } = decodeSnapshot(encodeSnapshot(w.book(0), 9), w.ownerOf);
  assert.deepEqual([...book.replies.keys()], ['req-1', 'req-2', 'req-3'], 'kept in snapshots, oldest first');
  const reply = [{ t: 'reply', id: 'req-1', answer: refusal }] as Effect[];
  assert.deepEqual(decodeEffects(encodeEffects(reply)), reply);
  assert.deepEqual(w.check().differences, []);
});

test('a withdrawal asked again after it ended, or a pool opened again after it closed, is told its first answer and moves nothing', () => {
  const w = funded(true);
  const withdraw: MoneyCall = { op: 'withdraw', account: userAccount(TAKER), amountMicros: 40n, ref: 'withdrawal:1' };
  w.call(0, withdraw, 1, T0, 'req-w');
  w.call(0, { op: 'finish_withdrawal', ref: 'withdrawal:1', isCompleted: true });
  assert.deepEqual(w.call(0, withdraw, 2, T0, 'req-w'), [{ to: 'client', callId: 2, answer: { ok: true } }]);
  assert.equal(w.book(0).bucket(userAccount(TAKER), 'pending_withdrawal'), 0n, 'no second withdrawal under its reference');
  w.call(0, { op: 'credit', account: PROTOCOL, amountMicros: 100n, key: 'fund-protocol' });
  const open: MoneyCall = { op: 'open_pool', contestId: 'c1', amountMicros: 30n };
  w.call(0, open, 3, T0, 'req-p');
  w.call(0, { op: 'close_pool', contestId: 'c1', expectedMicros: 30n });
  assert.deepEqual(w.call(0, open, 4, T0, 'req-p'), [{ to: 'client', callId: 4, answer: { ok: true, isReplay: false } }]);
  assert.equal(w.book(0).holds.has(poolRef('c1')), false, 'not opened again');
  assert.equal(w.book(0).available(PROTOCOL), 100n);
  assert.deepEqual(w.check().differences, []);
});

test('a fill from across the network repeated while it waits for its lock: one lock, one answer kept, both sends told', () => {
  const w = funded(); // rfq:1 reserved on owner 0, the maker on owner 1
  const owner = w.hosts[0]!.owner;
  const fill: MoneyCall = { op: 'fill', ref: 'rfq:1', filledMicros: 500n, makerAddress: MAKER, liabilityMicros: 700n };
  const ask = onlyPeer(w.call(0, fill, 1, T0, 'req-f'));
  assert.deepEqual(owner.call(2, fill, T0, [], 'req-f'), { effects: [], outputs: [] }, 'joins the first: no second lock');
  const committed = owner.peer(1, onlyPeer(w.peer(1, 0, ask.message)).message, T0);
  assert.deepEqual(
    committed.outputs.filter((o) => o.to === 'client'),
    [1, 2].map((callId) => ({ to: 'client', callId, answer: { ok: true } })),
  );
  assert.deepEqual(
    committed.effects.filter((effect) => effect.t === 'reply'),
    [{ t: 'reply', id: 'req-f', answer: { ok: true } }],
  );
  assert.deepEqual(w.call(0, fill, 3, T0, 'req-f'), [{ to: 'client', callId: 3, answer: { ok: true } }]);
});
