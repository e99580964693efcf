// Owners on real worker threads (src/engine/owner-runtime.ts, each with its journal, its read model on the
// shared LMDB environment and a MessagePort to the other): a fill whose maker lives on the other thread locks
// the maker's liability there, commits, posts the lock; its settlement pays the taker back across; LMDB's own
// ledger check (ledger/check.ts) finds both read models whole once they are quiet.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { peerPorts } from '../../src/engine/peer-links.js';
import type { MoneyAnswer, MoneyCall } from '../../src/ledger/money-ops.js';
import { ownerOfName } from '../../src/engine/routing.js';
import { creditRef, makerAccount, userAccount } from '../../src/records/ledger.js';
import { checkTransfers } from '../../src/ledger/check.js';
import { openStore } from '../../src/store/db.js';
import { waitFor } from '../helpers/wait.js';
import type { RequestBody } from './fixtures/owner-worker.js';

const OWNERS = 2;
const ownerOf = ownerOfName(OWNERS);
/** The first name `make(i)` that routing puts on `owner`. */
const nameOn = (owner: number, make: (i: number) => string, route: (name: string) => string = (name) => name) => {
  for (let i = 0; ; i++) if (ownerOf(route(make(i))) === owner) return make(i);
};

test('a fill across two owner threads: lock, fill, post over a real port; the settlement pays the taker across; LMDB checks clean', async () => {
  const root = mkdtempSync(join(tmpdir(), 'parlayd-owner-runtime-'));
  const lmdbDir = join(root, 'lmdb');
  const ports = peerPorts(OWNERS);
  const workers = ports.map(
    (own, self) =>
      new Worker(new URL('./fixtures/owner-worker.js', import.meta.url), {
        workerData: { dir: join(root, `owner-${self}`), lmdbDir, self, owners: OWNERS, ports: own },
        transferList: [...own.values()],
      }),
  );
  let nextId = 1;
  const ask = <T>(owner: number, request: RequestBody, onDecided?: (decided: unknown) => void) =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      const worker = workers[owner]!;
      const onMessage = (reply: { id: number; decided?: unknown; answer?: MoneyAnswer }) => {
        if (reply.id !== id) return;
        if ('decided' in reply && !('answer' in reply)) {
          onDecided?.(reply.decided);
          if (reply.decided === 'overloaded') reject(new Error('overloaded'));
          return;
        }
        worker.off('message', onMessage);
        resolve(reply as T);
      };
      worker.on('message', onMessage);
      worker.postMessage({ id, ...request });
    });
  const call = async (owner: number, body: MoneyCall): Promise<{ decided: unknown; answer: MoneyAnswer }> => {
    let decided: unknown;
    const { answer } = await ask<{ answer: MoneyAnswer }>(owner, { kind: 'call', call: body }, (d) => (decided = d));
    return { decided, answer };
  };
  const store = openStore(lmdbDir);
  try {
    const taker = nameOn(
      0,
      (i) => `taker${i}`,
      (name) => userAccount(name),
    );
    const maker = nameOn(
      1,
      (i) => `0x${i.toString(16).padStart(40, '0')}`,
      (name) => makerAccount(name),
    );
    for (const [account, key, amountMicros] of [
      [userAccount(taker), 'fund-taker', 1_000n],
      [makerAccount(maker), 'fund-maker', 5_000n],
    ] as const) {
      const { answer } = await call(ownerOf(creditRef(key)), { op: 'credit', account, amountMicros, key });
      assert.deepEqual(answer, { ok: true, isReplay: false });
    }
    // The maker's credit may have been decided on the taker's owner (its key's): wait until it reached the maker.
    const balances = (owner: number) => ask<{ accounts: Map<string, Record<string, bigint>> }>(owner, { kind: 'balances' });
    await waitFor(async () => (await balances(1)).accounts.get(makerAccount(maker))?.available === 5_000n, { what: 'the maker funded' });

    assert.deepEqual((await call(0, { op: 'reserve', userId: taker, amountMicros: 600n, ref: 'rfq:1' })).answer, { ok: true });
    const fill = await call(0, { op: 'fill', ref: 'rfq:1', filledMicros: 500n, makerAddress: maker, liabilityMicros: 700n });
    assert.equal(fill.decided, 'pending', 'the maker lives on the other thread: its lock is asked for');
    assert.deepEqual(fill.answer, { ok: true });
    await waitFor(async () => (await balances(1)).accounts.get(makerAccount(maker))?.locked === 700n, { what: 'the lock posted' });

    assert.deepEqual((await call(0, { op: 'settle', ref: 'rfq:1', makerAddress: maker, outcome: 'won' })).answer, {
      ok: true,
      isMoved: true,
    });
    await waitFor(async () => (await balances(0)).accounts.get(userAccount(taker))?.available === 1_000n - 600n + 100n + 500n + 700n, {
      what: 'the taker paid its stake and the liability from the other thread',
    });
    assert.equal((await balances(1)).accounts.get(makerAccount(maker))?.locked, 0n);

    await Promise.all([ask(0, { kind: 'barrier' }), ask(1, { kind: 'barrier' })]);
    assert.deepEqual(checkTransfers(store).differences, [], 'both read models are whole: every half written once');
    assert.equal(store.db<{ available: string }>('accounts').get(userAccount(taker))?.available, '1700');
    assert.equal(store.db<{ available: string }>('accounts').get(makerAccount(maker))?.available, '4300');
  } finally {
    await Promise.all(workers.map((_, owner) => ask(owner, { kind: 'close' })));
    await Promise.all(workers.map((worker) => worker.terminate()));
    await store.close();
    rmSync(root, { recursive: true, force: true });
  }
});
