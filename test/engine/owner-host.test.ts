// The owner's host (src/engine/owner-host.ts) killed with SIGKILL mid-burst, again and again, with and without
// snapshots: every answer it released is in the recovered book (credits and reservations, exact), money is
// conserved (everything held is what the recovered credits brought in), every held bucket equals its holds,
// and with snapshots the recovery starts from one and old journal files are gone. And the crash that leaves a
// gap between journal files (built here on purpose): what follows the gap is dropped and the journal goes on.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeSnapshot, encodeEffects } from '../../src/engine/codec.js';
import type { Effect } from '../../src/engine/effects.js';
import { OwnerHost } from '../../src/engine/owner-host.js';
import type { Output } from '../../src/engine/owner.js';
import type { MoneyCall } from '../../src/ledger/money-ops.js';
import { userAccount } from '../../src/records/ledger.js';
import { openStore } from '../../src/store/db.js';
import type { BlindWrite } from '../../src/store/records.js';
import { WriteBehind } from '../../src/store/write-behind.js';
import { Journal } from '../../src/wal/journal.js';
import { soleOwnerOptions } from '../helpers/owner-host.js';
import { waitFor } from '../helpers/wait.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/owner-until-killed.js', import.meta.url));

interface Dump {
  recovery: { snapshotSeq: number; readModelSeq: number | null; replayedRecords: number; lastSeq: number };
  creditKeys: Record<string, { account: string; amountMicros: string }>;
  /** The keys the book itself still holds. */
  bookCreditKeys: number;
  holds: Record<string, { account: string; bucket: string; amountMicros: string }>;
  totalMicros: string;
  differences: string[];
  /** With a read model: what LMDB holds that the recovered book does not, and LMDB's own ledger check. */
  readModelDifferences: string[];
}

/** Runs the host until it has acknowledged something, kills it after `extraMs` more; what it acknowledged. */
async function runAndKill(dir: string, args: string[], extraMs: number): Promise<Map<number, { call: any; answer: any }>> {
  const child = spawn(process.execPath, [SCRIPT, 'run', dir, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
  await new Promise<void>((resolve) => {
    const check = () => (/\nack /.test(output) ? setTimeout(resolve, extraMs) : child.stdout.once('data', check));
    check();
  });
  child.kill('SIGKILL');
  await new Promise((resolve) => child.once('exit', resolve));
  const calls = new Map<number, any>();
  const acked = new Map<number, { call: any; answer: any }>();
  for (const line of output.split('\n')) {
    const match = /^(call|ack) (\d+) (.*)$/.exec(line);
    if (match === null) continue; // the last line may be cut by the kill
    const id = Number(match[2]);
    if (match[1] === 'call') calls.set(id, JSON.parse(match[3]!));
    else acked.set(id, { call: calls.get(id), answer: JSON.parse(match[3]!) });
  }
  return acked;
}

async function dump(dir: string, args: string[]): Promise<Dump> {
  const child = spawn(process.execPath, [SCRIPT, 'dump', dir, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
  const code = await new Promise((resolve) => child.once('exit', resolve));
  assert.equal(code, 0);
  return JSON.parse(output) as Dump;
}

const RUNS = [
  { snapshotEvery: 1e9, hasReadModel: false },
  { snapshotEvery: 40, hasReadModel: false },
  { snapshotEvery: 40, hasReadModel: true },
];
for (const { snapshotEvery, hasReadModel } of RUNS) {
  const every = snapshotEvery === 1e9 ? 'never' : `${snapshotEvery} records`;
  test(`killed with SIGKILL 4 times mid-burst (snapshot every ${every}${hasReadModel ? ', LMDB read model' : ''}), nothing it answered is lost`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parlayd-owner-host-'));
    const readModel = hasReadModel ? ['read-model'] : [];
    try {
      const acked = new Map<number, { call: any; answer: any }>();
      for (let round = 0; round < 4; round++) {
        for (const [id, entry] of await runAndKill(dir, [String(snapshotEvery), ...readModel], 30 + round * 40)) acked.set(id, entry);
      }
      const recovered = await dump(dir, readModel);
      let credits = 0;
      let reservations = 0;
      for (const [id, { call, answer }] of acked) {
        assert.ok(call !== undefined, `ack ${id} of a call never printed`);
        if (answer.ok !== true) continue;
        if (call.op === 'credit') {
          credits++;
          assert.deepEqual(
            recovered.creditKeys[call.key],
            { account: call.account, amountMicros: call.amountMicros },
            `credit ${call.key}`,
          );
        } else {
          reservations++;
          assert.equal(recovered.holds[call.ref]?.amountMicros, call.amountMicros, `reservation ${call.ref}`);
        }
      }
      assert.ok(credits > 20 && reservations > 20, `${credits} credits and ${reservations} reservations acknowledged`);
      const creditedMicros = Object.values(recovered.creditKeys).reduce((sum, { amountMicros }) => sum + BigInt(amountMicros), 0n);
      assert.equal(BigInt(recovered.totalMicros), creditedMicros, 'everything held came from a recovered credit');
      assert.deepEqual(recovered.differences, []);
      assert.deepEqual(recovered.readModelDifferences, [], 'the read model is the recovered book');
      assert.equal(
        recovered.bookCreditKeys,
        hasReadModel ? 0 : Object.keys(recovered.creditKeys).length,
        'with a read model the book forgets each key once LMDB holds it',
      );
      const journals = readdirSync(dir).filter((name) => name.startsWith('journal-'));
      if (hasReadModel) {
        // A restart loads the newest snapshot LMDB has passed, and replays what LMDB lacks from the journal.
        assert.ok(recovered.recovery.readModelSeq! >= recovered.recovery.snapshotSeq);
        assert.ok(recovered.recovery.snapshotSeq > 0, 'recovered from a snapshot');
      } else if (snapshotEvery < 1e9) {
        assert.ok(recovered.recovery.snapshotSeq > 0, 'recovered from a snapshot');
        assert.ok(journals.length <= 2, `old journal files removed: ${journals.join(', ')}`);
      } else {
        assert.equal(recovered.recovery.snapshotSeq, 0);
        assert.deepEqual(journals, ['journal-0000000000000001']);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/**
 * A host in this process over `dir`, its answers collected in `released`; with `intervalMs`, its read model
 * on an LMDB environment in `<dir>/lmdb` (closed by `close`).
 */
function inProcess(dir: string, intervalMs?: number, snapshotEveryRecords = 1e9) {
  const released: Output[] = [];
  let host: OwnerHost | null = null;
  const store = intervalMs === undefined ? null : openStore(join(dir, 'lmdb'));
  const writer =
    store === null
      ? null
      : new WriteBehind(store, {
          owner: 'owner-0',
          intervalMs: intervalMs!,
          maxBatchWrites: 1_000,
          maxPendingWrites: 10_000,
          onApplied: () => host?.readModelApplied(),
          onCommitFailure: (error) => assert.fail(error as Error),
        });
  const open = (): OwnerHost =>
    (host = OwnerHost.open(
      soleOwnerOptions(dir, {
        snapshotEveryRecords,
        release: (outputs) => released.push(...outputs),
        ...(writer === null ? {} : { readModel: { sink: writer, maxWaitingWrites: 10_000 } }),
      }),
    ));
  // As OwnerRuntime closes: the journal's last records reach the read model's writer, which commits them.
  const close = async () => {
    await host?.close();
    await writer?.flush();
    await store?.close();
  };
  return { released, store, writer, open, close };
}

const credited = (host: OwnerHost, id: number, amountMicros: bigint, facts: BlindWrite[] = []) =>
  assert.deepEqual(host.call(id, { op: 'credit', account: userAccount(`u${id}`), amountMicros, key: `k${id}` }, facts), {
    ok: true,
    isReplay: false,
  });

test('a crash after a rotation but before the file before it was durable: the gap and what follows it go', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-owner-gap-'));
  const owner = inProcess(dir);
  try {
    let host = owner.open();
    for (let id = 1; id <= 3; id++) credited(host, id, 10n);
    await host.close();
    const durable = host.recovery.lastSeq + 3;
    // What a rotation at seq durable + 4 leaves when the old file lost records durable + 1 .. durable + 4: a new
    // file whose records were written but never released (the old file's records came first).
    const { journal } = Journal.open(
      join(dir, `journal-${String(durable + 5).padStart(16, '0')}`),
      { maxPendingBytes: 4 << 20, preallocateBytes: 0, onDurable: () => {}, onFailure: (error) => assert.fail(error) },
      () => assert.fail('a new file'),
      durable + 5,
    );
    const stranded: Effect = { t: 'credit_key', key: 'stranded', account: userAccount('u1'), amountMicros: 1_000n };
    journal.append(encodeEffects([stranded]));
    await journal.close();

    host = owner.open();
    assert.equal(host.recovery.lastSeq, durable, 'replay stops at the gap');
    assert.equal(host.owner.book.creditKeys.has('stranded'), false, 'nothing after the gap is applied');
    assert.deepEqual(
      readdirSync(dir).filter((name) => name.startsWith('journal-')),
      ['journal-0000000000000001'],
      'the file after the gap is gone',
    );
    credited(host, 4, 7n);
    await host.close();
    host = owner.open();
    assert.equal(host.recovery.lastSeq, durable + 1, 'the journal went on right after the gap');
    assert.equal(host.owner.book.available(userAccount('u4')), 7n);
    await host.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a start removes the temporary file of a snapshot a crash left behind', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-owner-tmp-'));
  try {
    writeFileSync(join(dir, 'snapshot-0000000000000005.tmp'), 'half a snapshot');
    const host = inProcess(dir).open();
    assert.deepEqual(readdirSync(dir), ['journal-0000000000000001']);
    await host.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("a record's read model writes (its facts too) leave for LMDB only once the journal holds it durably; the owner reads them at once", async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-owner-feed-'));
  const owner = inProcess(dir, 1);
  try {
    const host = owner.open();
    credited(host, 1, 10n, [{ db: 'rfqActive', key: 'r1', value: true }]);
    assert.equal(owner.writer!.pendingWrites, 0, 'nothing is handed on before the record is durable');
    assert.ok(host.readModelWaitingWrites > 0);
    assert.equal(host.readModel('rfqActive', 'r1'), true, 'the owner reads its own facts at once');
    assert.deepEqual(owner.released, []);
    await waitFor(() => owner.released.length === 1, { what: 'the credit answered', intervalMs: 1 });
    assert.equal(host.readModelWaitingWrites, 0, 'handed on with the answer');
    await owner.writer!.flush();
    assert.deepEqual(owner.store!.db('accounts').get(userAccount('u1')), {
      available: '10',
      reserved: '0',
      at_risk: '0',
      pending_withdrawal: '0',
    });
    assert.equal(owner.store!.db('rfqActive').get('r1'), true, 'the facts went with the money');
  } finally {
    await owner.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a read barrier resolves once LMDB holds everything the owner decided before it, without waiting for the interval', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-owner-barrier-'));
  const owner = inProcess(dir, 60_000); // the writer never commits on its own during the test: only the barrier does
  try {
    const host = owner.open();
    await host.readModelBarrier(); // nothing decided yet: at once
    for (let id = 1; id <= 5; id++) credited(host, id, 10n);
    assert.equal(owner.store!.db('accounts').get(userAccount('u5')), undefined, 'not in LMDB yet');
    await host.readModelBarrier();
    for (let id = 1; id <= 5; id++)
      assert.equal(owner.store!.db<{ available: string }>('accounts').get(userAccount(`u${id}`))?.available, '10');
  } finally {
    await owner.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('credit keys: the book forgets each once LMDB holds it and decides later calls from LMDB; snapshots and restarts hold only the recent', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-owner-credit-keys-'));
  const creditOf = (key: string, userId: string, amountMicros: bigint): MoneyCall => ({
    op: 'credit',
    account: userAccount(userId),
    amountMicros,
    key,
  });
  let owner = inProcess(dir, 1, 4);
  try {
    let host = owner.open();
    for (let id = 1; id <= 6; id++) credited(host, id, 10n);
    assert.equal(host.owner.book.creditKeys.size, 6, 'LMDB does not hold them yet');
    await waitFor(() => owner.released.length === 6, { what: 'the credits answered', intervalMs: 1 });
    await owner.writer!.flush();
    assert.equal(host.owner.book.creditKeys.size, 0, 'forgotten once LMDB holds them');
    assert.deepEqual(host.call(107, creditOf('k1', 'u1', 10n)), { ok: true, isReplay: true });
    assert.deepEqual(host.call(108, creditOf('k1', 'u1', 11n)), { ok: false, code: 'IDEMPOTENCY_CONFLICT' });
    assert.deepEqual(host.call(109, creditOf('k1', 'u2', 10n)), { ok: false, code: 'IDEMPOTENCY_CONFLICT' });
    assert.equal(host.owner.book.available(userAccount('u1')), 10n, 'a replay moves nothing');
    assert.equal(host.creditKeyUse('k6')?.amountMicros, 10n);

    // Later records, one at a time, until a snapshot past the first is written (a snapshot is skipped while
    // the one before is still being written): it holds none of the forgotten keys.
    const isLaterSnapshot = (name: string) => /^snapshot-\d{16}$/.test(name) && Number(name.slice('snapshot-'.length)) > 4;
    for (let id = 7; id <= 40 && !readdirSync(dir).some(isLaterSnapshot); id++) {
      credited(host, id, 10n);
      await waitFor(() => owner.released.some((output) => output.to === 'client' && output.callId === id), { what: `credit ${id}` });
    }
    const later = readdirSync(dir).filter(isLaterSnapshot).sort().at(-1);
    assert.ok(later !== undefined, 'a later snapshot');
    const { book, seq } = decodeSnapshot(readFileSync(join(dir, later)), () => 0);
    const kept = [...book.creditKeys.keys()];
    assert.ok(kept.length > 0 && kept.length <= seq - 6, `only keys of records after the first six: ${kept.join(', ')}`);
    assert.ok(
      kept.every((key) => Number(key.slice(1)) >= 7),
      `none forgotten before: ${kept.join(', ')}`,
    );
    await owner.close();

    owner = inProcess(dir, 1, 4);
    host = owner.open();
    assert.equal(host.owner.book.creditKeys.size, 0, 'a restart keeps none that LMDB holds');
    assert.deepEqual(host.call(110, creditOf('k3', 'u3', 10n)), { ok: true, isReplay: true });
    assert.deepEqual(host.call(111, creditOf('k8', 'u8', 12n)), { ok: false, code: 'IDEMPOTENCY_CONFLICT' });
    credited(host, 50, 5n);
    assert.deepEqual([...host.owner.book.creditKeys.keys()], ['k50']);
  } finally {
    await owner.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('while the journal is stuck a tick makes nothing (its resends would pile up behind the stuck record); it resends once the journal moves', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-owner-stall-'));
  const limits = { lockTimeoutMs: 1_000, lockQueryMs: 1_000, resendMs: 100, resendPerTick: 16 };
  const elsewhere = userAccount('elsewhere');
  let nowMs = 1_000;
  const sent: Output[] = [];
  const released: Output[] = [];
  const host = OwnerHost.open({
    dir,
    self: 0,
    ownerOf: (name) => (name === elsewhere ? 1 : 0),
    limits,
    snapshotEveryRecords: 1e9,
    maxPendingBytes: 1 << 20,
    nowMs: () => nowMs,
    release: (outputs) => {
      released.push(...outputs);
      sent.push(...outputs.filter((output) => output.to === 'peer'));
    },
    onFailure: (error) => assert.fail(error),
  });
  try {
    // A credit whose account lives on owner 1: its command waits on the channel, never acknowledged here.
    assert.deepEqual(host.call(1, { op: 'credit', account: elsewhere, amountMicros: 5n, key: 'k1' }), { ok: true, isReplay: false });
    await waitFor(() => sent.length === 1, { what: 'the command sent', intervalMs: 1 });
    // A record the journal has not made durable yet, and two seconds of ticks before it can (one synchronous
    // run: its durability is reported on a later turn, as a stalled disk would report it much later).
    credited(host, 2, 7n);
    for (let i = 0; i < 20; i++) {
      nowMs += limits.resendMs;
      host.tick();
    }
    await waitFor(() => released.some((output) => output.to === 'client' && output.callId === 2), {
      what: 'the record durable',
      intervalMs: 1,
    });
    assert.equal(sent.length, 1, 'no resend was made while the journal was stuck');
    nowMs += limits.resendMs;
    host.tick();
    await waitFor(() => sent.length === 2, { what: 'the resend once it moved', intervalMs: 1 });
    assert.deepEqual(sent[1], sent[0], 'the same command again');
  } finally {
    await host.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a start with thousands of interrupted RFQs releases them in bounded records: it opens, and every reservation goes back', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-owner-interrupted-'));
  // With the service's journal bounds (MAX_PENDING_JOURNAL_BYTES: 2 MiB, 4 MiB for the owner's journal) 8,000
  // releases with their records are ~5.6 MB: more than the journal holds unwritten.
  const RFQS = 8_000;
  const options = soleOwnerOptions(dir, { maxPendingBytes: 2 << 20 });
  try {
    let host = OwnerHost.open(options);
    credited(host, 1, BigInt(RFQS));
    for (let i = 0; i < RFQS; i++) host.call(10 + i, { op: 'reserve', userId: 'u1', amountMicros: 1n, ref: `rfq:${i}` });
    await host.close();
    // Each interrupted RFQ's end carries its records (about 730 bytes for a 3-leg RFQ): all of them in one
    // record would be over a record's 1 MiB, and the start would fail every time.
    const facts = (ref: string): BlindWrite[] => [{ db: 'meta', key: `ended:${ref}`, value: 'x'.repeat(700) as never }];
    host = OwnerHost.open({ ...options, interruptedFacts: facts });
    assert.equal(host.owner.book.available(userAccount('u1')), BigInt(RFQS), 'every reservation released');
    assert.equal([...host.owner.book.holds.keys()].filter((ref) => ref.startsWith('rfq:')).length, 0);
    await host.close();
    host = OwnerHost.open(options);
    assert.equal(host.owner.book.available(userAccount('u1')), BigInt(RFQS), 'and durably so');
    await host.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('once closing, a call is refused overloaded and a peer message or a tick is dropped: nothing reaches the closed journal', async () => {
  // Found by the graceful-shutdown test: a credit queued on the shard's port behind its stop reached the owner
  // after its journal closed, and the assertion there stopped the service with exit 70 instead of 0.
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-owner-closing-'));
  const owner = inProcess(dir);
  try {
    let host = owner.open();
    credited(host, 1, 10n);
    const closing = host.close();
    assert.equal(host.call(2, { op: 'credit', account: userAccount('u2'), amountMicros: 5n, key: 'k2' }), 'overloaded');
    host.peer(1, { m: 'lock', key: 'lock:rfq:x#1', ref: 'rfq:x', makerAddress: '0xabc', amountMicros: 1n, atMs: 0 });
    host.tick();
    await closing;
    assert.deepEqual(
      owner.released.map((output) => output.to),
      ['client'],
      'the first credit was answered; nothing was answered to the peer',
    );

    host = owner.open();
    assert.equal(host.owner.book.available(userAccount('u1')), 10n, 'the credit before the close is kept');
    assert.equal(host.owner.book.available(userAccount('u2')), 0n, 'the refused one moved nothing');
    await host.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
