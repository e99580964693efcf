// The unhandled-rejection guard every LMDB thread installs (src/store/room.ts guardCommitFailures), on real
// worker threads: a failed commit's rejection (storage full) does not stop the thread; any other stops it, and
// one that is not an Error stops it with an Error that says what it was (a shard's crash once reached the
// main thread's log as `err: {}`, with nothing to find it by).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';

const ROOM_URL = new URL('../../src/store/room.js', import.meta.url).href;

/** Runs `rejection` (JS source of the rejected value) in a worker with the guard: its error, or null when it ended normally. */
async function rejectInWorker(rejection: string): Promise<Error | null> {
  const source = `
    import(${JSON.stringify(ROOM_URL)}).then(({ guardCommitFailures }) => {
      guardCommitFailures();
      Promise.reject(${rejection});
      setTimeout(() => {}, 50); // a turn for the rejection to be reported
    });`;
  const worker = new Worker(source, { eval: true });
  let error: Error | null = null;
  worker.on('error', (err) => (error = err));
  const exitCode = await new Promise<number>((resolve) => worker.once('exit', resolve));
  assert.equal(exitCode === 0, error === null, `exit ${exitCode}`);
  return error;
}

test('a storage-full rejection is left to its callers; any other stops the thread, a non-Error one said in words', async () => {
  assert.equal(await rejectInWorker(`Object.assign(new Error('MDB: No space left on device'), { code: 'ENOSPC' })`), null);

  const other = await rejectInWorker(`new TypeError('a bug')`);
  assert.ok(other instanceof Error);
  assert.equal(other.message, 'a bug');

  const plain = await rejectInWorker(`{ detail: 'not an error', count: 3 }`);
  assert.ok(plain instanceof Error);
  assert.match(plain.message, /unhandled rejection with a non-Error: \{ detail: 'not an error', count: 3 \}/);
});
