// A journal on a disk that fills (src/wal/journal.ts): a write refused for want of space is tried again, not
// fatal. Nothing behind it is told durable while the disk is full; once space returns every record appended
// meanwhile becomes durable, in order, and a reopen replays them all. On a real small tmpfs (root only;
// skipped elsewhere, saying so).
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, test } from 'node:test';
import { Journal } from '../../src/wal/journal.js';
import { fillDisk, mountTmpfs, unmountTmpfs } from '../helpers/tmpfs.js';
import { waitFor } from '../helpers/wait.js';

const mountPoint = mountTmpfs(2);
after(() => {
  if (mountPoint !== null) unmountTmpfs(mountPoint);
});

test(
  'a full disk holds the journal back instead of failing it, and space returning lets it go on',
  { skip: mountPoint === null ? 'needs root and a tmpfs mount' : false },
  async () => {
    const path = join(mountPoint!, 'journal');
    const durable: number[] = [];
    const failures: Error[] = [];
    const options = {
      maxPendingBytes: 64 << 20,
      preallocateBytes: 0,
      onDurable: (seq: number) => durable.push(seq),
      onFailure: (error: Error) => failures.push(error),
    };
    const { journal } = Journal.open(path, options, () => {});
    const record = Buffer.alloc(3000, 7); // each group a page of its own or more: the disk cannot hide one
    journal.append(record);
    await waitFor(() => durable.at(-1) === 1, { what: 'the first record durable' });

    const filler = join(mountPoint!, 'filler');
    fillDisk(filler);
    for (let i = 0; i < 5; i++) journal.append(record);
    await sleep(300);
    assert.deepEqual(failures, [], 'a full disk is not a failure of the journal');
    assert.equal(durable.at(-1), 1, 'nothing appended on the full disk is told durable');

    rmSync(filler);
    await waitFor(() => durable.at(-1) === 6, { what: 'the records appended meanwhile durable', timeoutMs: 5_000 });
    assert.deepEqual(failures, []);
    assert.deepEqual(
      durable,
      [...durable].sort((a, b) => a - b),
      'in seq order',
    );
    await journal.close();

    const replayed: number[] = [];
    const reopened = Journal.open(path, options, (seq, payload) => {
      assert.deepEqual(payload, record);
      replayed.push(seq);
    });
    assert.deepEqual(replayed, [1, 2, 3, 4, 5, 6]);
    await reopened.journal.close();
  },
);
