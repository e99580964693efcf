// The read model's writer (src/store/write-behind.ts, issue 34) on a real LMDB in a temp dir: writes coalesce
// by key, the owner reads its own writes before they are committed, each commit stores the owner's appliedSeq
// with exactly the writes of the seqs up to it, the bound refuses, and a writer killed with SIGKILL mid-stream
// leaves LMDB equal to the state after a whole prefix of seqs (the one its appliedSeq names).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { openStore, type Store } from '../../src/store/db.js';
import { readAppliedSeq, WriteBehind, type WriteBehindOptions } from '../../src/store/write-behind.js';
import { runKilledFixture } from '../helpers/killed-fixture.js';
import { mountTmpfs, unmountTmpfs } from '../helpers/tmpfs.js';
import { waitFor } from '../helpers/wait.js';
import { STREAM_DBS, streamState, streamWrites } from '../helpers/read-model-writes.js';

const FULL_DISK_FIXTURE = fileURLToPath(new URL('./fixtures/write-behind-full-disk.js', import.meta.url));
const dirs: string[] = [];
const stores: Store[] = [];
after(async () => {
  for (const store of stores) await store.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function newDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-write-behind-'));
  dirs.push(dir);
  return dir;
}

function newStore(dir = newDir()): Store {
  const store = openStore(dir);
  stores.push(store);
  return store;
}

function newWriter(store: Store, options: Partial<WriteBehindOptions> = {}): { writer: WriteBehind; applied: number[] } {
  const applied: number[] = [];
  const writer = new WriteBehind(store, {
    owner: 'test',
    intervalMs: 10_000, // only flush() or a full batch commits, unless a test says otherwise
    maxBatchWrites: 1_000,
    maxPendingWrites: 10_000,
    onApplied: (seq) => applied.push(seq),
    onCommitFailure: (error) => {
      throw error;
    },
    ...options,
  });
  return { writer, applied };
}

/**
 * Writes enough for a commit to stay in flight a while (its B-tree work and flushes take milliseconds on
 * lmdb-js's write thread), so a test can act while it is.
 */
const filler = (prefix: string) =>
  Array.from({ length: 5_000 }, (_, i) => ({ db: 'marketWindows' as const, key: `${prefix}${i}`, value: i }));

/** LMDB's content of the stream's databases, as streamState keys it. */
function lmdbState(store: Store): Map<string, unknown> {
  const state = new Map<string, unknown>();
  for (const db of STREAM_DBS) {
    for (const { key, value } of store.db<unknown>(db).getRange()) state.set(`${db}/${String(key)}`, value);
  }
  return state;
}

describe('write-behind', () => {
  it('coalesces by key: the last write wins, one pending write per key, and LMDB gets the last value', async () => {
    const store = newStore();
    const { writer } = newWriter(store);
    assert.equal(writer.write(1, [{ db: 'marketWindows', key: 'a', value: 1 }]), true);
    assert.equal(
      writer.write(2, [
        { db: 'marketWindows', key: 'a', value: 2 },
        { db: 'marketWindows', key: 'b', value: 3 },
      ]),
      true,
    );
    assert.equal(writer.write(2, [{ db: 'marketWindows', key: 'a', value: 4 }]), true);
    assert.equal(writer.pendingWrites, 2);
    assert.equal(store.db('marketWindows').get('a'), undefined, 'nothing in LMDB before a commit');
    await writer.flush();
    assert.equal(store.db('marketWindows').get('a'), 4);
    assert.equal(store.db('marketWindows').get('b'), 3);
    assert.equal(writer.pendingWrites, 0);
    assert.equal(writer.commits, 1);
  });

  it('a put then remove of a key not in LMDB writes nothing; of a key in LMDB, a remove', async () => {
    const store = newStore();
    const { writer } = newWriter(store);
    writer.write(1, [{ db: 'mentionMarkets', key: 'old', value: true }]);
    await writer.flush();
    writer.write(2, [
      { db: 'mentionMarkets', key: 'new', value: true },
      { db: 'mentionMarkets', key: 'old', value: true },
    ]);
    assert.equal(writer.pendingWrites, 2);
    writer.write(3, [
      { db: 'mentionMarkets', key: 'new', value: undefined },
      { db: 'mentionMarkets', key: 'old', value: undefined },
    ]);
    assert.equal(writer.pendingWrites, 1, "only the remove of 'old' is left to write");
    await writer.flush();
    assert.equal(store.db('mentionMarkets').doesExist('old'), false);
    assert.equal(store.db('mentionMarkets').doesExist('new'), false);
    assert.equal(readAppliedSeq(store, 'test'), 3);
  });

  it('a put then remove of a key whose put is in the commit in flight is written as a remove', async () => {
    const store = newStore();
    const { writer } = newWriter(store);
    writer.write(1, [{ db: 'mentionMarkets', key: 'k', value: true }, ...filler('f')]);
    const first = writer.flush();
    await sleep(0); // the flush's commit starts at the end of the turn: the put is now in flight
    assert.equal(writer.appliedSeq, 0, 'the first commit is still in flight');
    writer.write(2, [{ db: 'mentionMarkets', key: 'k', value: true }]);
    writer.write(3, [{ db: 'mentionMarkets', key: 'k', value: undefined }]);
    assert.equal(writer.pendingWrites, 5_002, 'the in-flight put (and filler) and the pending remove');
    await first;
    assert.equal(store.db('mentionMarkets').doesExist('k'), true);
    await writer.flush();
    assert.equal(store.db('mentionMarkets').doesExist('k'), false);
  });

  it('get returns pending and in-flight writes (removes included) before LMDB, then LMDB', async () => {
    const store = newStore();
    const { writer } = newWriter(store);
    writer.write(1, [{ db: 'rfqKeys', key: 'gone', value: { requestId: 'r0', contentHash: 'h0' } }]);
    await writer.flush();
    writer.write(2, [
      { db: 'rfqKeys', key: 'x', value: { requestId: 'r1', contentHash: 'h1' } },
      { db: 'rfqKeys', key: 'gone', value: undefined },
      ...filler('f'),
    ]);
    assert.deepEqual(writer.get('rfqKeys', 'x'), { requestId: 'r1', contentHash: 'h1' });
    assert.equal(writer.get('rfqKeys', 'gone'), undefined);
    assert.deepEqual(store.db('rfqKeys').get('gone'), { requestId: 'r0', contentHash: 'h0' }, 'LMDB still has it');
    const flushed = writer.flush();
    await sleep(0);
    assert.equal(writer.appliedSeq, 1, 'the commit is in flight');
    assert.deepEqual(writer.get('rfqKeys', 'x'), { requestId: 'r1', contentHash: 'h1' });
    assert.equal(writer.get('rfqKeys', 'gone'), undefined);
    await flushed;
    assert.equal(writer.pendingWrites, 0);
    assert.deepEqual(writer.get('rfqKeys', 'x'), { requestId: 'r1', contentHash: 'h1' });
    assert.deepEqual(store.db('rfqKeys').get('x'), { requestId: 'r1', contentHash: 'h1' });
    assert.equal(writer.get('rfqKeys', 'gone'), undefined);
  });

  it('flush resolves once everything written before it is committed, appliedSeq and onApplied with it', async () => {
    const store = newStore();
    const { writer, applied } = newWriter(store);
    assert.equal(writer.appliedSeq, 0);
    await writer.flush(); // nothing written: resolves at once
    assert.equal(writer.commits, 0);
    for (let seq = 1; seq <= 5; seq++) writer.write(seq, streamWrites(seq));
    await writer.flush();
    assert.equal(writer.appliedSeq, 5);
    assert.deepEqual(applied, [5]);
    assert.equal(readAppliedSeq(store, 'test'), 5);
    assert.deepEqual(lmdbState(store), streamState(5));
  });

  it('each commit stores the appliedSeq of exactly the writes in LMDB: a whole prefix of seqs', async () => {
    const store = newStore();
    const checked: number[] = [];
    const { writer } = newWriter(store, {
      intervalMs: 5,
      maxBatchWrites: 40,
      onApplied: (seq) => {
        // On the owner's thread, right after the commit: LMDB is the state after seqs 1..seq, and says seq.
        assert.equal(readAppliedSeq(store, 'test'), seq);
        assert.deepEqual(lmdbState(store), streamState(seq));
        checked.push(seq);
      },
    });
    for (let seq = 1; seq <= 400; seq++) {
      assert.equal(writer.write(seq, streamWrites(seq)), true);
      if (seq % 7 === 0) await sleep(1);
    }
    await writer.flush();
    assert.ok(checked.length >= 5, `several commits (${checked.length})`);
    assert.equal(checked.at(-1), 400);
    assert.deepEqual(
      checked,
      checked.slice().sort((a, b) => a - b),
    );
  });

  it('commits at most every intervalMs unless maxBatchWrites pile up', async () => {
    const store = newStore();
    const slow = newWriter(store, { owner: 'slow', intervalMs: 200, maxBatchWrites: 10_000 });
    const startMs = performance.now();
    for (let seq = 1; seq <= 20; seq++) {
      slow.writer.write(seq, [{ db: 'marketWindows', key: `s${seq}`, value: seq }]);
      await sleep(15);
    }
    await waitFor(() => slow.writer.appliedSeq === 20, { what: 'the last write applied', timeoutMs: 10_000 });
    // The first write commits at once (no commit for intervalMs before it), the rest wait out the interval.
    const elapsedMs = performance.now() - startMs;
    assert.ok(slow.writer.commits <= Math.ceil(elapsedMs / 200) + 1, `${slow.writer.commits} commits in ${elapsedMs} ms`);
    const full = newWriter(store, { owner: 'full', intervalMs: 60_000, maxBatchWrites: 10 });
    full.writer.write(1, [{ db: 'marketWindows', key: 'f0', value: 0 }]);
    await waitFor(() => full.writer.appliedSeq === 1, { what: 'the first commit, at once', timeoutMs: 10_000 });
    full.writer.write(2, [{ db: 'marketWindows', key: 'f1', value: 1 }]);
    await sleep(100);
    assert.equal(full.writer.appliedSeq, 1, 'one write waits for the interval (a minute)');
    full.writer.write(
      3,
      Array.from({ length: 10 }, (_, i) => ({ db: 'marketWindows' as const, key: `g${i}`, value: i })),
    );
    await waitFor(() => full.writer.appliedSeq === 3, { what: 'a full batch, well before the interval', timeoutMs: 10_000 });
  });

  it('a backlog past maxBatchWrites commits as several batches of whole seqs, in order, each its own appliedSeq', async () => {
    const store = newStore();
    const checked: number[] = [];
    const { writer } = newWriter(store, {
      maxBatchWrites: 10,
      onApplied: (seq) => {
        assert.equal(readAppliedSeq(store, 'test'), seq);
        assert.deepEqual(lmdbState(store), streamState(seq));
        checked.push(seq);
      },
    });
    // Four writes a seq (streamWrites): a batch is sealed at the first seq boundary at or past 10 writes.
    for (let seq = 1; seq <= 11; seq++) assert.equal(writer.write(seq, streamWrites(seq)), true);
    assert.deepEqual(writer.get('marketWindows', 'n1'), 1, 'the owner reads its writes in a sealed batch');
    await writer.flush();
    assert.deepEqual(checked, [3, 6, 9, 11]);
    assert.equal(writer.commits, 4);
  });

  it('past maxPendingWrites, write refuses and takes nothing; after a commit it takes again', async () => {
    const store = newStore();
    const { writer } = newWriter(store, { maxPendingWrites: 10, maxBatchWrites: 10 });
    const ten = Array.from({ length: 10 }, (_, i) => ({ db: 'marketWindows' as const, key: `k${i}`, value: i }));
    assert.equal(writer.write(1, ten), true);
    assert.equal(writer.hasRoom(1), false);
    assert.equal(writer.write(2, [{ db: 'marketWindows', key: 'over', value: 1 }]), false);
    assert.equal(writer.pendingWrites, 10);
    assert.equal(writer.get('marketWindows', 'over'), undefined);
    await writer.flush();
    assert.equal(writer.appliedSeq, 1);
    assert.equal(store.db('marketWindows').doesExist('over'), false);
    assert.equal(writer.write(2, [{ db: 'marketWindows', key: 'over', value: 1 }]), true);
    await writer.flush();
    assert.equal(store.db('marketWindows').get('over'), 1);
  });

  it('a seq already sealed into a commit is refused as a programmer error', async () => {
    const store = newStore();
    const { writer } = newWriter(store);
    writer.write(1, [{ db: 'marketWindows', key: 'a', value: 1 }]);
    await writer.flush();
    assert.throws(() => writer.write(1, [{ db: 'marketWindows', key: 'a', value: 2 }]), assert.AssertionError);
    assert.throws(() => writer.write(0, []), assert.AssertionError);
  });

  it('killed with SIGKILL mid-stream, LMDB is the state after the whole prefix of seqs its appliedSeq names', async () => {
    const dir = newDir();
    const script = fileURLToPath(new URL('./fixtures/write-until-killed.js', import.meta.url));
    let lastAppliedSeq = 0;
    for (let round = 0; round < 6; round++) {
      const child = spawn(process.execPath, [script, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      // Killed at some point after its first commit: mid-batch or between batches, wherever that falls.
      await waitFor(() => output.includes('\n'), { what: 'the first applied seq', timeoutMs: 20_000 });
      await sleep(50 + round * 67);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const reported = Math.max(0, ...output.split('\n').filter(Boolean).map(Number));
      assert.ok(reported > lastAppliedSeq, `round ${round}: the child applied more (${reported} after ${lastAppliedSeq})`);
      const store = openStore(dir);
      try {
        const appliedSeq = readAppliedSeq(store, 'killed');
        assert.ok(appliedSeq >= reported, `nothing reported applied is missing (${appliedSeq} < ${reported})`);
        assert.deepEqual(lmdbState(store), streamState(appliedSeq));
        lastAppliedSeq = appliedSeq;
      } finally {
        await store.close();
      }
    }
  });

  describe('a commit that fails for want of space (a full tmpfs)', () => {
    const mountPoint = mountTmpfs(16, 'parlayd-write-behind-tmpfs-');
    after(() => {
      if (mountPoint !== null) unmountTmpfs(mountPoint);
    });

    it(
      'is retried with its writes kept and read, new work refused meanwhile, and commits once space is freed',
      { skip: mountPoint === null ? 'needs root and a tmpfs mount' : false },
      async () => {
        // In its own process, which ends itself with SIGKILL once it has reported (helpers/killed-fixture.ts).
        const { whileFull, afterFreed } = await runKilledFixture<Record<string, Record<string, unknown>>>(FULL_DISK_FIXTURE, [mountPoint!]);
        assert.deepEqual(
          whileFull,
          {
            taken: true,
            failuresAreStorageFull: true,
            firstFailure: whileFull!['firstFailure'],
            appliedSeq: 1,
            applied: [1],
            pendingWrites: 1_000, // the writes are kept
            ownerReadsItsWrite: true, // and read by the owner
            newWorkRefused: true,
          },
          String(whileFull!['firstFailure']),
        );
        assert.deepEqual(afterFreed, {
          appliedSeq: 2,
          stored: true,
          storedAppliedSeq: 2,
          isRefusing: false, // the commit that went through ends the refusal
        });
      },
    );
  });
});
