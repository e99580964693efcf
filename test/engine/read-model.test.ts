// The read model of the owners' money (src/engine/read-model.ts) is today's LMDB ledger, to the record: the
// same random operations run through ledger.ts (LMDB transactions, the engine of today) and through one
// MoneyOwner whose records are projected and written by the read model's writer (store/write-behind.ts)
// leave the two data directories with equal accounts, transfers, holds, users' journal rows and credit keys,
// and LMDB's own ledger check (ledger/check.ts) finds nothing in either. Between owners, halves: each side's
// owner writes its account and both the transfer, once.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Book } from '../../src/engine/book.js';
import { MoneyOwner, type Step } from '../../src/engine/owner.js';
import type { MoneyCall } from '../../src/ledger/money-ops.js';
import { readModelWrites } from '../../src/engine/read-model.js';
import { makerAccount, PROTOCOL, userAccount, withdrawalRef, type AccountId } from '../../src/records/ledger.js';
import { checkTransfers } from '../../src/ledger/check.js';
import { checkCreditKey } from '../../src/ledger/credit-keys.js';
import { Ledger } from '../../src/ledger/ledger.js';
import { openStore, type DbName, type Store } from '../../src/store/db.js';
import { WriteBehind } from '../../src/store/write-behind.js';

const dirs: string[] = [];
const stores: Store[] = [];
after(async () => {
  for (const store of stores) await store.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function newStore(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-read-model-'));
  dirs.push(dir);
  const store = openStore(dir);
  stores.push(store);
  return store;
}

const LIMITS = { lockTimeoutMs: 1_000, lockQueryMs: 1_000, resendMs: 100, resendPerTick: 16 };
const COMPARED: DbName[] = ['accounts', 'transfers', 'holds', 'accountJournal', 'credits'];

function contents(store: Store, db: DbName): Array<[string, unknown]> {
  return [...store.db(db).getRange()].map(({ key, value }) => [String(key), value]);
}

/** mulberry32: a seeded stream of numbers in [0, 1). */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

for (const seed of [1, 2, 3]) {
  test(`seed ${seed}: 1,500 operations leave today's ledger and the owner's read model equal`, async () => {
    const today = newStore();
    const projected = newStore();
    const ledger = new Ledger(today, { name: 'the test', owns: () => true });
    const owner = new MoneyOwner(new Book(0, () => 0), LIMITS);
    const writer = new WriteBehind(projected, {
      owner: 'owner-0',
      intervalMs: 5,
      maxBatchWrites: 1_000,
      maxPendingWrites: 100_000,
      onApplied: () => {},
      onCommitFailure: (error) => assert.fail(error as Error),
    });
    const next = random(seed);
    const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(next() * items.length)];
    const amount = (max: number) => BigInt(1 + Math.floor(next() * max));
    const users = ['u0', 'u1', 'u2', 'u3'];
    const makers = ['0xm0', '0xm1'];
    const reserved: string[] = [];
    const filled: Array<{ ref: string; maker: string }> = [];
    const withdrawals: string[] = [];
    const pools = new Map<string, { expectedMicros: bigint; entries: string[]; collected: string[] }>();
    let seq = 0;
    let moved = 0;

    /** Runs `call` on the owner; when it moves money, `old` does the same on today's ledger in a transaction. */
    const both = async (call: MoneyCall, atMs: number, old: () => unknown): Promise<boolean> => {
      const step = owner.call(seq, call, atMs);
      const answer = step.outputs.find((output) => output.to === 'client');
      assert.ok(answer?.to === 'client');
      if (step.effects.length === 0) return false;
      assert.ok(answer.answer.ok, JSON.stringify(answer.answer));
      seq++;
      assert.ok(writer.write(seq, readModelWrites(step.effects, owner.book)));
      await today.transact(old);
      moved++;
      return true;
    };

    for (let i = 0; i < 1_500; i++) {
      const atMs = 1_000 + i;
      const roll = next();
      if (roll < 0.2) {
        const account: AccountId = pick([...users.map(userAccount), ...makers.map(makerAccount), PROTOCOL])!;
        const key = `k${i}`;
        const amountMicros = amount(5_000);
        await both({ op: 'credit', account, amountMicros, key }, atMs, () => {
          checkCreditKey(today, key, { account, amountMicros: amountMicros.toString(), atMs });
          ledger.credit(account, amountMicros, `credit:${key}`, atMs);
        });
      } else if (roll < 0.4) {
        const userId = pick(users)!;
        const ref = `rfq:r${i}`;
        const amountMicros = amount(800);
        if (await both({ op: 'reserve', userId, amountMicros, ref }, atMs, () => ledger.reserve(userId, amountMicros, ref, atMs)))
          reserved.push(ref);
      } else if (roll < 0.5 && reserved.length > 0) {
        const ref = reserved.splice(Math.floor(next() * reserved.length), 1)[0]!;
        await both({ op: 'release', ref }, atMs, () => ledger.release(ref, atMs));
      } else if (roll < 0.65 && reserved.length > 0) {
        const ref = reserved[Math.floor(next() * reserved.length)]!;
        const hold = owner.book.holds.get(ref)!;
        const filledMicros = next() < 0.5 ? hold.amountMicros : 1n + (hold.amountMicros - 1n) / 2n;
        const maker = pick(makers)!;
        const liabilityMicros = amount(2_000);
        const call: MoneyCall = { op: 'fill', ref, filledMicros, makerAddress: maker, liabilityMicros };
        const isFilled = await both(call, atMs, () => assert.ok(ledger.fill(ref, filledMicros, maker, liabilityMicros, atMs)));
        if (isFilled) {
          reserved.splice(reserved.indexOf(ref), 1);
          filled.push({ ref, maker });
        }
      } else if (roll < 0.75 && filled.length > 0) {
        const { ref, maker } = filled.splice(Math.floor(next() * filled.length), 1)[0]!;
        const outcome = pick(['won', 'lost', 'voided'] as const)!;
        await both({ op: 'settle', ref, makerAddress: maker, outcome }, atMs, () => ledger.settlePosition(ref, maker, outcome, atMs));
      } else if (roll < 0.82) {
        const account = pick([...users.map(userAccount), ...makers.map(makerAccount)])!;
        const ref = withdrawalRef(`w${i}`);
        const amountMicros = amount(1_500);
        if (await both({ op: 'withdraw', account, amountMicros, ref }, atMs, () => ledger.withdraw(account, amountMicros, ref, atMs)))
          withdrawals.push(ref);
      } else if (roll < 0.87 && withdrawals.length > 0) {
        const ref = withdrawals.splice(Math.floor(next() * withdrawals.length), 1)[0]!;
        const isCompleted = next() < 0.5;
        await both({ op: 'finish_withdrawal', ref, isCompleted }, atMs, () => ledger.finishWithdrawal(ref, isCompleted, atMs));
      } else if (roll < 0.9) {
        const contestId = `c${i}`;
        const amountMicros = next() < 0.3 ? 0n : amount(1_000);
        const isOpen = await both({ op: 'open_pool', contestId, amountMicros }, atMs, () =>
          assert.ok(ledger.openPool(contestId, amountMicros, atMs)),
        );
        // A pool of 0 moves no money but opens its hold: the owner journals it all the same.
        if (isOpen) pools.set(contestId, { expectedMicros: amountMicros, entries: [], collected: [] });
      } else if (pools.size > 0) {
        const contestId = pick([...pools.keys()])!;
        const pool = pools.get(contestId)!;
        const action = next();
        if (action < 0.4) {
          const userId = pick(users)!;
          const ref = `contest:${contestId}:${userId}:${i}`;
          const amountMicros = amount(300);
          if (await both({ op: 'reserve', userId, amountMicros, ref }, atMs, () => ledger.reserve(userId, amountMicros, ref, atMs)))
            pool.entries.push(ref);
        } else if (action < 0.7 && pool.entries.length > 0) {
          const ref = pool.entries.shift()!;
          const stake = owner.book.holds.get(ref)!.amountMicros;
          await both({ op: 'collect', contestId, ref }, atMs, () => ledger.collect(ref, contestId, atMs));
          pool.expectedMicros += stake;
          pool.collected.push(ref);
        } else if (action < 0.85 && pool.collected.length > 0 && pool.expectedMicros > 0n) {
          const ref = pool.collected.shift()!;
          const userId = ref.split(':')[2]!;
          const amountMicros = 1n + BigInt(Math.floor(next() * Number(pool.expectedMicros)));
          await both({ op: 'pay_prize', contestId, ref, userId, amountMicros }, atMs, () =>
            ledger.payPrize(ref, contestId, userId, amountMicros, atMs),
          );
          pool.expectedMicros -= amountMicros;
        } else if (pool.entries.length === 0) {
          const { expectedMicros } = pool;
          await both({ op: 'close_pool', contestId, expectedMicros }, atMs, () => ledger.closePool(contestId, atMs));
          pools.delete(contestId);
        }
      }
    }
    await writer.flush();
    assert.ok(moved > 600, `${moved} operations moved money`);
    for (const db of COMPARED) assert.deepEqual(contents(projected, db), contents(today, db), `${db} differs`);
    assert.ok(contents(today, 'accountJournal').length > 500, 'users have journal rows');
    assert.deepEqual(checkTransfers(today).differences, []);
    assert.deepEqual(checkTransfers(projected).differences, []);
  });
}

/** Two owners on one LMDB, each with its read model's writer: the protocol and credit keys on 0, the rest on 1. */
function twoOwners(store: Store): { owners: MoneyOwner[]; writers: WriteBehind[] } {
  const ownerOf = (account: AccountId) => (account === PROTOCOL || account.startsWith('credit:') ? 0 : 1);
  const owners = [new MoneyOwner(new Book(0, ownerOf), LIMITS), new MoneyOwner(new Book(1, ownerOf), LIMITS)];
  const writers = owners.map(
    (_, self) =>
      new WriteBehind(store, {
        owner: `owner-${self}`,
        intervalMs: 5,
        maxBatchWrites: 1_000,
        maxPendingWrites: 10_000,
        onApplied: () => {},
        onCommitFailure: (error) => assert.fail(error as Error),
      }),
  );
  return { owners, writers };
}

test('between two owners each writes its own side, and both the transfer: the halves read as one transfer', async () => {
  const store = newStore();
  const { owners, writers } = twoOwners(store);
  const seqs = [0, 0];
  const deliver = (self: number, step: Step): void => {
    if (step.effects.length > 0) assert.ok(writers[self]!.write(++seqs[self]!, readModelWrites(step.effects, owners[self]!.book)));
    for (const output of step.outputs)
      if (output.to === 'peer') deliver(output.owner, owners[output.owner]!.peer(self, output.message, 2_000));
  };
  // A credit decided by its key's owner (0) for a user on owner 1: the debit half (the world) on 0, the credit on 1.
  deliver(0, owners[0]!.call(1, { op: 'credit', account: userAccount('u1'), amountMicros: 700n, key: 'k1' }, 2_000));
  await Promise.all(writers.map((writer) => writer.flush()));
  const transfers = contents(store, 'transfers');
  assert.deepEqual(
    transfers.map(([key]) => key),
    ['credit:k1/credit'],
  );
  assert.deepEqual(contents(store, 'accounts'), [['user:u1', { available: '700', reserved: '0', at_risk: '0', pending_withdrawal: '0' }]]);
  assert.equal(contents(store, 'accountJournal').length, 1, 'the user has one row, written by its owner');
  assert.deepEqual(checkTransfers(store).differences, []);
});

test('a transfer between two owners with only one half in LMDB: the check counts that side, the rest is in transit', async () => {
  const store = newStore();
  const { owners, writers } = twoOwners(store);
  const seqs = [0, 0];
  /** The step's writes reach LMDB now; its messages to the other owner are handed back, not delivered. */
  const write = async (self: number, step: Step): Promise<Step['outputs']> => {
    assert.ok(writers[self]!.write(++seqs[self]!, readModelWrites(step.effects, owners[self]!.book)));
    await writers[self]!.flush();
    return step.outputs;
  };
  const peerSteps = (outputs: Step['outputs'], to: number, from: number): Step[] =>
    outputs.flatMap((output) => (output.to === 'peer' && output.owner === to ? [owners[to]!.peer(from, output.message, 2_000)] : []));
  const summary = () => {
    const check = checkTransfers(store);
    return { ok: check.ok, differences: check.differences.length, inTransit: check.in_transit_micros, total: check.total_micros };
  };

  // A credit of 700 decided on owner 0 (its key's) for a user of owner 1: the debit half (the world) alone.
  const sent = await write(0, owners[0]!.call(1, { op: 'credit', account: userAccount('u1'), amountMicros: 700n, key: 'k1' }, 2_000));
  assert.deepEqual(summary(), { ok: true, differences: 0, inTransit: '700', total: '0' }, 'in LMDB: credited, not yet arrived');
  for (const step of peerSteps(sent, 1, 0)) await write(1, step);
  assert.deepEqual(summary(), { ok: true, differences: 0, inTransit: '0', total: '700' }, 'both halves');

  // Another credit, 300, whose credit half reaches LMDB before its debit half: arrived, not yet sent.
  const decided = owners[0]!.call(2, { op: 'credit', account: userAccount('u1'), amountMicros: 300n, key: 'k2' }, 2_000);
  for (const step of peerSteps(decided.outputs, 1, 0)) await write(1, step);
  assert.deepEqual(summary(), { ok: true, differences: 0, inTransit: '-300', total: '1000' }, 'in LMDB: arrived, not yet credited');
  await write(0, decided);
  assert.deepEqual(summary(), { ok: true, differences: 0, inTransit: '0', total: '1000' }, 'both halves');

  // A half marker whose side is missing from its account is a difference, as any bucket that disagrees is.
  await store.db('accounts').put('user:u1', { available: '300', reserved: '0', at_risk: '0', pending_withdrawal: '0' });
  const broken = checkTransfers(store);
  assert.equal(broken.ok, false, 'a side LMDB marks as held must show in its account');
  assert.deepEqual(
    broken.differences.map((d) => [d.account, d.bucket, d.expected_micros, d.actual_micros]),
    [['user:u1', 'available', '1000', '300']],
  );
});
