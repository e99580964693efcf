// A shard's journal (src/wal/journal.ts) on real files: appends never wait for the disk, groups are made
// durable in seq order, a reopen replays exactly what was written and cuts a torn tail, and a process killed
// with SIGKILL mid-burst loses nothing it had reported durable. (A killed process leaves its written pages in
// the kernel's cache, so that test proves the order of write and report, not the flush; the flush is what
// O_DSYNC promises, and a test reads from /proc that the file is opened with it.)
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  appendFileSync,
  constants,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import { Journal, type JournalOptions } from '../../src/wal/journal.js';
import { FILE_HEADER_BYTES, MAX_PAYLOAD_BYTES, recordBytes } from '../../src/wal/record.js';

const dir = mkdtempSync(join(tmpdir(), 'parlayd-journal-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const newPath = (): string => join(dir, `journal-${++files}`);

interface Opened {
  journal: Journal;
  replayed: string[];
  durable: number[];
  recovery: ReturnType<typeof Journal.open>['recovery'];
  /** Resolves once every record appended so far is durable. */
  settled(): Promise<void>;
}

function open(path: string, options: Partial<JournalOptions> = {}): Opened {
  const replayed: string[] = [];
  const durable: number[] = [];
  const waiters: Array<() => void> = [];
  const { journal, recovery } = Journal.open(
    path,
    {
      maxPendingBytes: 1 << 21,
      preallocateBytes: 0,
      onDurable: (seq) => {
        durable.push(seq);
        if (seq === journal.nextSeq - 1) waiters.splice(0).forEach((wake) => wake());
      },
      onFailure: (error) => assert.fail(error),
      ...options,
    },
    (_, payload) => replayed.push(payload.toString()),
  );
  const settled = (): Promise<void> =>
    (durable.at(-1) ?? recovery.lastSeq) === journal.nextSeq - 1 ? Promise.resolve() : new Promise((wake) => waiters.push(wake));
  return { journal, replayed, durable, recovery, settled };
}

describe('journal', () => {
  it('an append returns its seq at once; durability is told later, once per group, in seq order', async () => {
    const path = newPath();
    const opened = open(path);
    const seqs = ['a', 'b', 'c'].map((text) => opened.journal.append(Buffer.from(text)));
    assert.deepEqual(seqs, [1, 2, 3]);
    assert.deepEqual(opened.durable, [], 'nothing is durable before the turn ends and the disk answers');
    await opened.settled();
    assert.deepEqual(opened.durable, [3], "one turn's appends are one group");
    for (let turn = 0; turn < 20; turn++) {
      opened.journal.append(Buffer.from(`turn ${turn}`));
      await new Promise(setImmediate);
    }
    await opened.settled();
    assert.ok(
      opened.durable.every((seq, i) => i === 0 || seq > opened.durable[i - 1]!),
      'rising',
    );
    assert.equal(opened.durable.at(-1), 23);
    await opened.journal.close();
  });

  it('its file is opened O_DSYNC: a group is durable when its one write returns, with no fdatasync after it', async () => {
    const path = newPath();
    const opened = open(path);
    const fds = readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === path;
      } catch {
        return false; // the directory's own descriptor, gone by the time it is read
      }
    });
    assert.equal(fds.length, 1, 'one descriptor open on the journal file');
    const flags = Number.parseInt(/^flags:\s+([0-7]+)$/m.exec(readFileSync(`/proc/self/fdinfo/${fds[0]}`, 'utf8'))![1]!, 8);
    assert.equal(flags & constants.O_DSYNC, constants.O_DSYNC, `flags ${flags.toString(8)} lack O_DSYNC`);
    opened.journal.append(Buffer.from('a'));
    await opened.settled();
    await opened.journal.close();
  });

  it('a reopen replays every record in order and appends after them', async () => {
    const path = newPath();
    const first = open(path);
    const texts = Array.from({ length: 500 }, (_, i) => `record ${i} `.padEnd(10 + (i % 300), '#'));
    texts.forEach((text) => first.journal.append(Buffer.from(text)));
    await first.journal.close();
    const second = open(path);
    assert.deepEqual(second.replayed, texts);
    assert.deepEqual(second.recovery, { firstSeq: 1, lastSeq: 500, cutBytes: 0, stop: 'end' });
    assert.equal(second.journal.append(Buffer.from('next')), 501);
    await second.journal.close();
    assert.deepEqual(open(path).replayed, [...texts, 'next']);
  });

  it('a torn last record is cut at open, durably, and the next append follows the last good one', async () => {
    const path = newPath();
    const first = open(path);
    ['one', 'two', 'three'].forEach((text) => first.journal.append(Buffer.from(text)));
    await first.journal.close();
    const goodBytes = statSync(path).size;
    truncateSync(path, goodBytes - 2); // the last record lost its last bytes
    appendFileSync(path, Buffer.from([0xde, 0xad])); // and something else landed there
    const second = open(path);
    assert.deepEqual(second.replayed, ['one', 'two']);
    assert.equal(second.recovery.lastSeq, 2);
    assert.equal(second.recovery.cutBytes, recordBytes('three'.length));
    assert.equal(statSync(path).size, goodBytes - recordBytes('three'.length), 'cut before any append');
    assert.equal(second.journal.append(Buffer.from('THREE')), 3);
    await second.journal.close();
    assert.deepEqual(open(path).replayed, ['one', 'two', 'THREE']);
  });

  it('written ahead with zeros, it ends where its records do', async () => {
    const path = newPath();
    const first = open(path, { preallocateBytes: 1 << 16 });
    for (let i = 0; i < 100; i++) {
      first.journal.append(Buffer.from(`z${i}`));
      if (i % 10 === 0) await first.settled();
    }
    await first.journal.close();
    assert.ok(statSync(path).size > FILE_HEADER_BYTES + 100 * recordBytes(3), 'the zeros are there');
    const second = open(path, { preallocateBytes: 1 << 16 });
    assert.equal(second.replayed.length, 100);
    assert.equal(second.replayed.at(-1), 'z99');
    assert.equal(second.recovery.stop, 'bad-length');
    await second.journal.close();
  });

  it('past maxPendingBytes an append is refused and takes no seq', async () => {
    const path = newPath();
    const opened = open(path, { maxPendingBytes: recordBytes(1 << 20) });
    const big = Buffer.alloc(1 << 20, 1);
    assert.equal(opened.journal.append(big), 1);
    assert.equal(opened.journal.append(Buffer.from('x')), null);
    assert.equal(opened.journal.nextSeq, 2);
    await opened.settled();
    assert.equal(opened.journal.append(Buffer.from('x')), 2, 'room again once the group went to the disk');
    await opened.journal.close();
  });

  it('refuses to open a file that is not a journal, leaving it as it was', () => {
    const path = newPath();
    const text = 'not a journal, just some file that was here';
    writeFileSync(path, text);
    assert.throws(() => open(path), /not a journal file/);
    assert.equal(statSync(path).size, text.length);
  });

  for (const preallocateBytes of [0, 1 << 20]) {
    it(`killed with SIGKILL mid-burst, nothing it reported durable is lost (preallocate ${preallocateBytes})`, async () => {
      const path = newPath();
      const script = fileURLToPath(new URL('./fixtures/append-until-killed.js', import.meta.url));
      for (let round = 0; round < 5; round++) {
        const child = spawn(process.execPath, [script, path], {
          stdio: ['ignore', 'pipe', 'inherit'],
          env: { ...process.env, PREALLOCATE_BYTES: String(preallocateBytes) },
        });
        let output = '';
        child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
        // Let it run some groups; then kill it wherever it is, without a chance to flush.
        await new Promise<void>((resolve) => child.stdout.once('data', () => setTimeout(resolve, 20 + round * 15)));
        child.kill('SIGKILL');
        await new Promise((resolve) => child.once('exit', resolve));
        const acknowledged = Math.max(0, ...output.split('\n').filter(Boolean).map(Number));
        assert.ok(acknowledged > 0, 'the child acknowledged something before it was killed');
        const reopened = open(path);
        assert.ok(
          reopened.recovery.lastSeq >= acknowledged,
          `round ${round}: durable ${acknowledged}, replayed ${reopened.recovery.lastSeq}`,
        );
        reopened.replayed.forEach((text, i) => assert.match(text, new RegExp(`^record ${i + 1} `)));
        await reopened.journal.close();
      }
    });
  }
});

describe('a journal whose write fails for good', () => {
  it('closes rejected with the failure: what it held past its last durable report may not be on the disk', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'parlayd-journal-efbig-'));
    try {
      // A real failed write: the file size limit (ulimit -f, 16 KiB) refuses the second group with EFBIG (the
      // signal it also raises is ignored, as a service's would be by its handler).
      const journalUrl = new URL('../../src/wal/journal.js', import.meta.url).href;
      const script = `
        const { Journal } = await import(${JSON.stringify(journalUrl)});
        const durable = [];
        const failures = [];
        const options = { maxPendingBytes: 2 << 20, preallocateBytes: 0, onDurable: (s) => durable.push(s), onFailure: (e) => failures.push(e.code) };
        const { journal } = Journal.open(${JSON.stringify(join(dir, 'journal'))}, options, () => {});
        journal.append(Buffer.alloc(100));
        await new Promise((resolve) => setTimeout(resolve, 100));
        journal.append(Buffer.alloc(32 * 1024));
        let closed;
        try { await journal.close(); closed = 'resolved'; } catch (e) { closed = 'rejected ' + e.code; }
        process.stdout.write(JSON.stringify({ durable, failures, closed }));`;
      const child = spawn('bash', ['-c', `trap '' XFSZ; ulimit -f 16; exec "${process.execPath}" --input-type=module -e "$0"`, script], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let output = '';
      child.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
      assert.equal(await new Promise((resolve) => child.once('exit', resolve)), 0);
      assert.deepEqual(JSON.parse(output), { durable: [1], failures: ['EFBIG'], closed: 'rejected EFBIG' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a record over the bound', () => {
  it('is refused without using a seq: the next record takes it, and a reopen replays both neighbours', async () => {
    const path = join(dir, 'oversize');
    const options = { maxPendingBytes: 4 << 20, preallocateBytes: 0, onDurable: () => {}, onFailure: (error: Error) => assert.fail(error) };
    const { journal } = Journal.open(path, options, () => {});
    assert.equal(journal.append(Buffer.from('a')), 1);
    assert.throws(() => journal.append(Buffer.alloc(MAX_PAYLOAD_BYTES + 1)), /payload of/);
    assert.equal(journal.append(Buffer.from('b')), 2, 'no hole in the seqs');
    await journal.close();
    const replayed: string[] = [];
    const reopened = Journal.open(path, options, (seq, payload) => replayed.push(`${seq}:${payload.toString()}`));
    assert.deepEqual(replayed, ['1:a', '2:b']);
    await reopened.journal.close();
  });
});
