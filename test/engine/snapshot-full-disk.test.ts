// A snapshot's rotation on a disk that fills (src/engine/owner-host.ts, src/wal/journal.ts), on a real small
// tmpfs: the owner never fails for it, whichever step the disk refuses.
//   - the new journal file (its header): no rotation, the journal goes on in its file, no empty file stays;
//   - the old file's last group, while it closes: it waits for space, as every group does, and nothing after
//     it is released meanwhile;
//   - the snapshot itself: dropped (no part of it stays), the journal kept whole, tried again later.
// Each time, once space returns everything is released in order, a snapshot is written at the next try, and a
// reopen recovers every credit. Root only (a tmpfs mount); skipped elsewhere, saying so.
import assert from 'node:assert/strict';
import { closeSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test, type TestContext } from 'node:test';
import { OwnerHost } from '../../src/engine/owner-host.js';
import type { Output } from '../../src/engine/owner.js';
import { userAccount } from '../../src/records/ledger.js';
import { soleOwnerOptions } from '../helpers/owner-host.js';
import { fillDisk, mountTmpfs, unmountTmpfs } from '../helpers/tmpfs.js';
import { waitFor } from '../helpers/wait.js';

const mountPoint = mountTmpfs(4);
after(() => {
  if (mountPoint !== null) unmountTmpfs(mountPoint);
});
const skip = mountPoint === null ? 'needs root and a tmpfs mount' : false;
const PAGE = 4096;

/** A host on the tmpfs in `name`, its failures and released answers collected. */
function owner(name: string, snapshotEveryRecords: number) {
  const dir = join(mountPoint!, name);
  const released: Output[] = [];
  const failures: Error[] = [];
  const open = () =>
    OwnerHost.open(
      soleOwnerOptions(dir, {
        snapshotEveryRecords,
        release: (outputs) => released.push(...outputs),
        onFailure: (error) => failures.push(error),
      }),
    );
  const answered = () => released.filter((output) => output.to === 'client').length;
  const files = () => readdirSync(dir).sort();
  return { dir, open, released, failures, answered, files };
}

/** Credit `id` of 10 micros to user `u<id>`, its key `padBytes` long (a large key makes a large record and snapshot). */
function credit(host: OwnerHost, id: number, padBytes = 0): void {
  const key = `k${id}`.padEnd(padBytes, '-');
  assert.deepEqual(host.call(id, { op: 'credit', account: userAccount(`u${id}`), amountMicros: 10n, key }, []), {
    ok: true,
    isReplay: false,
  });
}

/** Fills the disk but for `freeBytes` (whole pages): a spare file is written first, and deleted once the rest is full. */
function fillAllBut(freeBytes: number, t: TestContext): string {
  const spare = join(mountPoint!, 'spare');
  const filler = join(mountPoint!, 'filler');
  t.after(() => rmSync(filler, { force: true })); // a failed test leaves the next one a disk with room
  if (freeBytes > 0) {
    const fd = openSync(spare, 'w');
    writeSync(fd, Buffer.alloc(freeBytes, 1));
    closeSync(fd);
  }
  fillDisk(filler);
  rmSync(spare, { force: true });
  return filler;
}

async function reopenHolds(o: ReturnType<typeof owner>, credits: number, snapshotSeq: number): Promise<void> {
  const host = o.open();
  assert.equal(host.recovery.snapshotSeq, snapshotSeq, 'recovered from the snapshot written once space returned');
  for (let id = 1; id <= credits; id++) assert.equal(host.owner.book.available(userAccount(`u${id}`)), 10n, `credit ${id}`);
  await host.close();
}

test(
  'the new journal file refused: no rotation and no empty file; the journal goes on, and the snapshot is made later',
  { skip },
  async (t) => {
    const o = owner('new-file', 20);
    let host = o.open();
    for (let id = 1; id <= 10; id++) credit(host, id);
    await waitFor(() => o.answered() === 10, { what: 'the first credits answered' });

    const filler = fillAllBut(0, t);
    // A page each, so the file's last page cannot hide them; seq 20 and 25 are due snapshots.
    for (let id = 11; id <= 30; id++) credit(host, id, PAGE);
    await sleep(300);
    assert.deepEqual(o.failures, [], 'a full disk is not a failure of the owner');
    assert.equal(o.answered(), 10, 'nothing decided on the full disk is released');
    assert.deepEqual(o.files(), ['journal-0000000000000001'], 'no rotation, and no empty journal file');

    rmSync(filler);
    await waitFor(() => o.answered() === 30, { what: 'the credits released once space returned', timeoutMs: 5_000 });
    for (let id = 31; id <= 35; id++) credit(host, id); // seq 35: the next try (a quarter of the interval after 30)
    await waitFor(() => o.files().includes('snapshot-0000000000000035'), { what: 'the snapshot at the next try' });
    assert.deepEqual(o.failures, []);
    await host.close();
    await reopenHolds(o, 35, 35);
  },
);

test(
  'the old file’s last group refused while it closes: it waits for space, and what follows is released after it',
  { skip },
  async (t) => {
    const o = owner('old-file', 10);
    const host = o.open();
    for (let id = 1; id <= 9; id++) credit(host, id);
    await waitFor(() => o.answered() === 9, { what: 'the first credits answered' });

    // Two pages free: the new file's header takes one, and the rotation's record (5 pages) does not fit.
    const filler = fillAllBut(2 * PAGE, t);
    credit(host, 10, 5 * PAGE);
    credit(host, 11); // in the new file: told durable only after the old file's last group
    await sleep(300);
    assert.deepEqual(o.failures, [], 'a group refused at a rotation is not a failure');
    assert.equal(o.answered(), 9);
    assert.deepEqual(o.files(), ['journal-0000000000000001', 'journal-0000000000000011']);

    rmSync(filler);
    await waitFor(() => o.answered() === 11, { what: 'both released once space returned', timeoutMs: 5_000 });
    assert.deepEqual(
      o.released.flatMap((output) => (output.to === 'client' ? [output.callId] : [])),
      Array.from({ length: 11 }, (_, i) => i + 1),
      'in order across the two files',
    );
    await waitFor(() => o.files().includes('snapshot-0000000000000010'), { what: 'the snapshot, once the old file closed' });
    assert.deepEqual(o.failures, []);
    await host.close();
    await reopenHolds(o, 11, 10);
  },
);

test('the snapshot refused: dropped with no part left, the journal kept whole, the snapshot made at the next try', { skip }, async (t) => {
  const o = owner('snapshot', 8);
  const host = o.open();
  for (let id = 1; id <= 7; id++) credit(host, id, 32 << 10); // a snapshot of these keys is ~224 KiB
  await waitFor(() => o.answered() === 7, { what: 'the first credits answered' });

  // 64 KiB free: the new file and the old file's last group fit, the snapshot does not.
  const filler = fillAllBut(64 << 10, t);
  credit(host, 8);
  await waitFor(() => o.answered() === 8, { what: 'the rotation’s record released' });
  await sleep(300);
  assert.deepEqual(o.failures, [], 'a snapshot refused for want of space is not a failure');
  assert.deepEqual(o.files(), ['journal-0000000000000001', 'journal-0000000000000009'], 'no snapshot, no part of one');

  rmSync(filler);
  for (let id = 9; id <= 10; id++) credit(host, id); // seq 10: the next try
  await waitFor(() => o.files().includes('snapshot-0000000000000010'), { what: 'the snapshot at the next try' });
  await waitFor(() => o.answered() === 10, { what: 'every credit answered' });
  assert.deepEqual(o.failures, []);
  await host.close();
  await reopenHolds(o, 10, 10);
});
