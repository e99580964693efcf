// The contest actor's mailbox (contests/serial-queue.ts): one task at a time per contest, in arrival order,
// bounded, and a failing task never blocks the ones behind it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SerialQueues } from '../../src/contests/serial-queue.js';
import { isApiError } from '../../src/lib/errors.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('SerialQueues', () => {
  it('runs the tasks of one key one at a time, in arrival order', async () => {
    const queues = new SerialQueues(100);
    const log: string[] = [];
    let running = 0;
    const task = (name: string) => async () => {
      running++;
      assert.equal(running, 1, 'two tasks of one key overlapped');
      log.push(`start ${name}`);
      await tick();
      log.push(`end ${name}`);
      running--;
      return name;
    };
    const results = await Promise.all(['a', 'b', 'c'].map((n) => queues.run('k', task(n))));
    assert.deepEqual(results, ['a', 'b', 'c']);
    assert.deepEqual(log, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    assert.equal(queues.depth('k'), 0);
  });

  it('runs different keys independently', async () => {
    const queues = new SerialQueues(100);
    let release!: () => void;
    const blocked = queues.run('slow', () => new Promise<void>((r) => (release = r)));
    assert.equal(await queues.run('fast', async () => 'done'), 'done');
    release();
    await blocked;
  });

  it('a failing task rejects for its caller only; the next task still runs', async () => {
    const queues = new SerialQueues(100);
    const failed = queues.run('k', async () => {
      throw new Error('boom');
    });
    const next = queues.run('k', async () => 'next');
    await assert.rejects(failed, /boom/);
    assert.equal(await next, 'next');
  });

  it("refuses client work beyond the bound with OVERLOADED, but never the service's own tasks", async () => {
    const queues = new SerialQueues(2);
    let release!: () => void;
    const first = queues.run('k', () => new Promise<void>((r) => (release = r)));
    const second = queues.run('k', async () => undefined);
    await assert.rejects(
      queues.run('k', async () => undefined),
      (err: unknown) => isApiError(err) && err.code === 'OVERLOADED',
    );
    const internal = queues.run('k', async () => 'resolved', false);
    assert.equal(queues.depth('k'), 3);
    release();
    await Promise.all([first, second]);
    assert.equal(await internal, 'resolved');
    await queues.drain();
    assert.equal(queues.depth('k'), 0);
  });
});
