// Two shard nodes' owners in two processes on a real nats-server (src/cluster/shard-node-main.ts), each with
// its own journal and LMDB, partitions 0-127 and 128-255: a fill whose maker lives on the other node locks the
// maker's liability there over NATS, commits, posts (one whose maker is on the same node's other owner does it
// by the port between their threads, none of it on NATS); a maker funded for N fills raced by 2N RFQs of users on
// both nodes fills exactly N; each node killed with SIGKILL mid-burst loses nothing it answered, its calls are
// UNAVAILABLE at once while it is gone, and once it is back its locks are settled by asking; nats-server
// restarted mid-burst moves nothing twice. After each test the cluster's ledger check through NATS
// (cluster/ledger-check.ts) is clean, and both journals are read back and checked together (engine/check.ts
// checkOwners): conservation to the micro, every half of every transfer once, every held bucket equal to its
// holds, nothing in transit.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { checkCluster } from '../../src/cluster/ledger-check.js';
import { MoneyCalls, type MoneyReply } from '../../src/cluster/money-calls.js';
import { partitionOfName, partitionOfUser } from '../../src/cluster/partitions.js';
import { decode, encode, subjects } from '../../src/cluster/wire.js';
import type { MoneyCall } from '../../src/ledger/money-ops.js';
import { creditRef, lockRef, makerAccount, PROTOCOL, userAccount } from '../../src/records/ledger.js';
import { natsForFile } from '../helpers/nats-server.js';
import {
  A,
  A2,
  assertClusterCheckClean,
  assertJournalsClean,
  B,
  look as lookAt,
  makerOn,
  MAP,
  NodeProcess,
  NODES,
  userOn,
  waitForQuiet,
} from '../helpers/owner-nodes.js';
import { waitFor } from '../helpers/wait.js';

const fixture = natsForFile();
const { skip } = fixture;
let money: MoneyCalls | null = null;

/** Two nodes on fresh data directories; `run` gets them, then both stop and their journals are checked together. */
async function withCluster(run: (nodes: [NodeProcess, NodeProcess]) => Promise<void>): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'parlayd-owners-nats-'));
  const nodes = NODES.map((node) => new NodeProcess(node, join(root, node.name.replace(' ', '-')), fixture.server.url)) as [
    NodeProcess,
    NodeProcess,
  ];
  try {
    await Promise.all(nodes.map((node) => node.start()));
    await run(nodes);
    await waitForQuiet(fixture.nc);
    await assertClusterCheckClean(fixture.nc);
    await Promise.all(nodes.map((node) => node.stop()));
    assertJournalsClean(nodes);
  } finally {
    await Promise.allSettled(nodes.map((node) => node.kill()));
    rmSync(root, { recursive: true, force: true });
  }
}

const look = (owner: number) => lookAt(fixture.nc, owner);

/** Money calls on the file's connection (made at the first, inside a test). */
const callFor = (partition: number, call: MoneyCall): Promise<MoneyReply> =>
  (money ??= new MoneyCalls(fixture.nc, { deadlineMs: 3_000, resendMs: 250 })).call(partition, call);
const credit = (account: string, amountMicros: bigint, key: string) =>
  callFor(partitionOfName(creditRef(key)), { op: 'credit', account, amountMicros, key });
const available = async (owner: number, account: string) => BigInt((await look(owner)).accounts[account]?.available ?? '0');

test('a fill whose maker lives on the other node: lock, fill, post over NATS; the settlement pays the taker across', { skip }, async () => {
  await withCluster(async () => {
    const taker = userOn(A, 'taker');
    const maker = makerOn(B);
    assert.deepEqual(await credit(userAccount(taker), 1_000n, 'fund-taker'), { ok: true, isReplay: false });
    assert.deepEqual(await credit(makerAccount(maker), 5_000n, 'fund-maker'), { ok: true, isReplay: false });
    assert.deepEqual(await credit(makerAccount(maker), 5_000n, 'fund-maker'), { ok: true, isReplay: true }, 'a repeated key credits once');
    await waitFor(async () => (await available(B, makerAccount(maker))) === 5_000n && (await available(A, userAccount(taker))) === 1_000n, {
      what: 'both funded (a credit decided by its key’s owner travels to the account’s)',
    });

    const home = partitionOfUser(taker);
    assert.deepEqual(await callFor(home, { op: 'reserve', userId: taker, amountMicros: 600n, ref: 'rfq:1' }), { ok: true });
    assert.deepEqual(await callFor(home, { op: 'fill', ref: 'rfq:1', filledMicros: 500n, makerAddress: maker, liabilityMicros: 700n }), {
      ok: true,
    });
    await waitFor(async () => (await look(B)).accounts[makerAccount(maker)]?.locked === '700', {
      what: 'the lock posted on the maker’s node',
    });
    assert.equal((await look(B)).holds[lockRef('rfq:1')]?.isPending, false);

    assert.deepEqual(await callFor(home, { op: 'settle', ref: 'rfq:1', makerAddress: maker, outcome: 'won' }), { ok: true, isMoved: true });
    await waitFor(async () => (await available(A, userAccount(taker))) === 1_000n - 600n + 100n + 500n + 700n, {
      what: 'the taker paid its stake back and the liability from the other node',
    });
    assert.equal(await available(B, makerAccount(maker)), 4_300n);
  });
});

test('a fill between two owners of one node locks by the port between their threads; only other nodes go over NATS', { skip }, async () => {
  await withCluster(async () => {
    // Every peer message on the owners' NATS subjects, by sender and receiver (each is [from, batch]).
    const overNats: Array<{ from: number; to: number; kinds: string[] }> = [];
    const taps = [A, A2, B].map((to) =>
      fixture.nc.subscribe(subjects.ownerPeer(to), {
        callback: (error, msg) => {
          if (error !== null) return;
          const [from, batch] = decode<[number, Array<{ m: string }>]>(msg.data);
          overNats.push({ from, to, kinds: batch.map(({ m }) => m) });
        },
      }),
    );
    await fixture.nc.flush();
    try {
      const taker = userOn(A, 'taker');
      const neighbour = makerOn(A2); // node a's other owner
      const farMaker = makerOn(B);
      assert.equal((await credit(userAccount(taker), 2_000n, 'fund-taker')).ok, true);
      assert.equal((await credit(makerAccount(neighbour), 5_000n, 'fund-neighbour')).ok, true);
      assert.equal((await credit(makerAccount(farMaker), 5_000n, 'fund-far')).ok, true);
      await waitFor(
        async () =>
          (await available(A, userAccount(taker))) === 2_000n &&
          (await available(A2, makerAccount(neighbour))) === 5_000n &&
          (await available(B, makerAccount(farMaker))) === 5_000n,
        { what: 'all three funded' },
      );

      const home = partitionOfUser(taker);
      for (const [ref, maker] of [
        ['rfq:near', neighbour],
        ['rfq:far', farMaker],
      ] as const) {
        assert.deepEqual(await callFor(home, { op: 'reserve', userId: taker, amountMicros: 600n, ref }), { ok: true });
        assert.deepEqual(await callFor(home, { op: 'fill', ref, filledMicros: 500n, makerAddress: maker, liabilityMicros: 700n }), {
          ok: true,
        });
      }
      await waitFor(
        async () =>
          (await look(A2)).holds[lockRef('rfq:near')]?.isPending === false &&
          (await look(B)).holds[lockRef('rfq:far')]?.isPending === false,
        { what: 'both locks posted' },
      );
      assert.equal((await look(A2)).accounts[makerAccount(neighbour)]?.locked, '700');
      assert.equal(await available(A, userAccount(taker)), 2_000n - 500n - 500n, 'each fill put 500 at risk and gave the rest back');

      const between = (x: number, y: number) => overNats.filter(({ from, to }) => (from === x && to === y) || (from === y && to === x));
      assert.deepEqual(between(A, A2), [], 'nothing between the two owners of node a crossed NATS');
      const far = between(A, B).flatMap(({ kinds }) => kinds);
      for (const kind of ['lock', 'lock_reply', 'command', 'ack'])
        assert.ok(far.includes(kind), `the far fill's ${kind} went over NATS: ${far}`);
    } finally {
      for (const tap of taps) tap.unsubscribe();
    }
  });
});

test('a maker funded for N fills, raced by 2N RFQs of users on both nodes, fills exactly N', { skip }, async () => {
  await withCluster(async () => {
    const N = 20;
    const liability = 100n;
    const maker = makerOn(B);
    assert.equal((await credit(makerAccount(maker), BigInt(N) * liability, 'fund-maker')).ok, true);
    const users = Array.from({ length: 2 * N }, (_, i) => userOn(i % 2 === 0 ? A : B, `racer${i}`));
    await Promise.all(users.map((user, i) => credit(userAccount(user), 50n, `fund-${i}`)));
    await waitFor(async () => (await available(B, makerAccount(maker))) === BigInt(N) * liability, { what: 'the maker funded' });
    await waitFor(
      async () => {
        for (const user of users) if ((await available(MAP.ownerOf(userAccount(user)), userAccount(user))) !== 50n) return false;
        return true;
      },
      { what: 'every racer funded' },
    );

    const racing = Promise.all(
      users.map(async (user, i) => {
        const home = partitionOfUser(user);
        const ref = `rfq:race-${i}`;
        assert.deepEqual(await callFor(home, { op: 'reserve', userId: user, amountMicros: 50n, ref }), { ok: true });
        const fill = await callFor(home, { op: 'fill', ref, filledMicros: 50n, makerAddress: maker, liabilityMicros: liability });
        if (!fill.ok) assert.equal((await callFor(home, { op: 'release', ref })).ok, true);
        return fill;
      }),
    );
    // Checked while the fills cross: each node's read model conserved, the sum conserved with what is in transit.
    const during = await checkCluster(fixture.nc, MAP.owners, 2_000);
    assert.equal(during.ok, true, JSON.stringify(during.owners.map(({ check }) => check.differences)));
    const fills = await racing;
    const filled = fills.filter((fill) => fill.ok).length;
    assert.equal(filled, N, `fills: ${JSON.stringify(fills)}`);
    assert.ok(
      fills.every((fill) => fill.ok || fill.code === 'UNCOVERED'),
      'every other fill refused UNCOVERED',
    );
    const makerBook = (await look(B)).accounts[makerAccount(maker)]!;
    assert.equal(makerBook.available, '0');
    assert.equal(makerBook.locked, String(BigInt(N) * liability));
  });
});

test(
  'each node killed with SIGKILL mid-burst: nothing it answered is lost, its calls are UNAVAILABLE while it is gone, its locks settle by asking',
  { skip },
  async () => {
    await withCluster(async (nodes) => {
      const maker = makerOn(B);
      assert.equal((await credit(makerAccount(maker), 1_000_000n, 'fund-maker')).ok, true);
      const takers = [userOn(A, 'burst-a'), userOn(B, 'burst-b')];
      for (const [i, taker] of takers.entries()) assert.equal((await credit(userAccount(taker), 1_000_000n, `fund-taker-${i}`)).ok, true);
      await waitFor(async () => (await available(B, makerAccount(maker))) === 1_000_000n, { what: 'the maker funded' });

      const acked: Array<{ taker: string; ref: string }> = [];
      /** Fills whose answer was lost with a node: committed or not, as the node's journal says. */
      const unknown = new Set<string>();
      let rfq = 0;
      for (const victim of nodes) {
        // A burst of RFQs of takers on both nodes, all against the maker on B; the victim dies in the middle of it.
        const burst = Array.from({ length: 60 }, async (_, i) => {
          const taker = takers[i % 2]!;
          const home = partitionOfUser(taker);
          const ref = `rfq:${++rfq}`;
          await new Promise((resolve) => setTimeout(resolve, i * 2));
          const reserve = await callFor(home, { op: 'reserve', userId: taker, amountMicros: 10n, ref });
          if (!reserve.ok) return;
          const fill = await callFor(home, { op: 'fill', ref, filledMicros: 10n, makerAddress: maker, liabilityMicros: 20n });
          if (fill.ok) acked.push({ taker, ref });
          else if (fill.code === 'UNAVAILABLE') unknown.add(ref);
          else await callFor(home, { op: 'release', ref });
        });
        await new Promise((resolve) => setTimeout(resolve, 40));
        await victim.kill();
        // A call sent in the instant the node died may still reach its dead connection and wait out its deadline;
        // within a second the server has dropped the node's subscriptions and a call is refused at once.
        const diedAtMs = Date.now();
        const probe = new MoneyCalls(fixture.nc, { deadlineMs: 200, resendMs: 200 });
        await waitFor(
          async () => {
            const startedMs = Date.now();
            const gone = await probe.call(partitionOfUser(takers[nodes.indexOf(victim)]!), { op: 'release', ref: 'rfq:none' });
            return gone.ok === false && gone.code === 'UNAVAILABLE' && Date.now() - startedMs < 100;
          },
          { what: 'a call to the dead node refused at once (no responders)', timeoutMs: 1_000, intervalMs: 10 },
        );
        assert.ok(Date.now() - diedAtMs < 1_000);
        const partial = await checkCluster(fixture.nc, MAP.owners, 300);
        assert.deepEqual([partial.ok, partial.unavailable], [false, victim.owners], 'no ledger check passes with a node missing');
        await Promise.all(burst);
        await victim.start();
        await waitForQuiet(fixture.nc);
      }
      assert.ok(acked.length > 10, `${acked.length} fills acknowledged`);

      // Every fill answered is a position on both sides: the taker's stake held, the maker's lock posted.
      const [bookA, bookB] = [await look(A), await look(B)];
      for (const { taker, ref } of acked) {
        const takerBook = MAP.ownerOf(userAccount(taker)) === A ? bookA : bookB;
        assert.ok(takerBook.holds[ref] !== undefined, `${ref}: the taker's position`);
        assert.equal(bookB.holds[lockRef(ref)]?.isPending, false, `${ref}: the maker's lock posted`);
      }
      const fillsLocked = Object.keys(bookB.holds)
        .filter((ref) => ref.endsWith(':lock'))
        .map((ref) => ref.slice(0, -':lock'.length));
      const isAcked = new Set(acked.map(({ ref }) => ref));
      assert.deepEqual(
        fillsLocked.filter((ref) => !isAcked.has(ref) && !unknown.has(ref)),
        [],
        'no lock but those of fills acknowledged or whose answer was lost with a node',
      );
    });
  },
);

test(
  'nats-server restarted mid-burst: every process reconnects, channels resend what was lost, nothing moves twice',
  { skip },
  async () => {
    await withCluster(async () => {
      const maker = makerOn(B);
      const taker = userOn(A, 'restart');
      assert.equal((await credit(makerAccount(maker), 1_000_000n, 'fund-maker')).ok, true);
      assert.equal((await credit(userAccount(taker), 1_000_000n, 'fund-taker')).ok, true);
      await waitFor(async () => (await available(B, makerAccount(maker))) === 1_000_000n, { what: 'the maker funded' });
      const home = partitionOfUser(taker);
      const outcomes = new Map<string, MoneyReply>();
      // When the server was killed; and how many fills were asked before it and answered after (resent or not).
      let killedAtMs = Infinity;
      let spanningFills = 0;
      let fillsInFlight = 0;
      const burst = Array.from({ length: 200 }, async (_, i) => {
        await new Promise((resolve) => setTimeout(resolve, i * 2));
        const ref = `rfq:restart-${i}`;
        if (!(await callFor(home, { op: 'reserve', userId: taker, amountMicros: 10n, ref })).ok) return;
        const askedAtMs = performance.now();
        fillsInFlight++;
        const fill = await callFor(home, { op: 'fill', ref, filledMicros: 10n, makerAddress: maker, liabilityMicros: 20n });
        fillsInFlight--;
        if (askedAtMs < killedAtMs && performance.now() > killedAtMs) spanningFills++;
        outcomes.set(ref, fill);
        // A fill refused, or lost with the server, ends as its RFQ would: released (a committed fill's position stays).
        if (!fill.ok) await callFor(home, { op: 'release', ref });
      });
      // The kill once fills are on their way (a fixed delay found none in flight on some runs: each takes ~1 ms).
      await waitFor(() => fillsInFlight >= 3, { what: 'fills in flight', timeoutMs: 5_000, intervalMs: 1 });
      killedAtMs = performance.now();
      await fixture.server.restart();
      await Promise.all(burst);
      await waitForQuiet(fixture.nc);
      // Both nodes and this caller are back on the restarted server: a fill across them goes through again.
      assert.equal((await callFor(home, { op: 'reserve', userId: taker, amountMicros: 10n, ref: 'rfq:after' })).ok, true);
      const after = await callFor(home, { op: 'fill', ref: 'rfq:after', filledMicros: 10n, makerAddress: maker, liabilityMicros: 20n });
      assert.deepEqual(after, { ok: true });
      outcomes.set('rfq:after', after);
      const [bookA, bookB] = [await look(A), await look(B)];
      const positions = Object.keys(bookB.holds).filter((ref) => ref.endsWith(':lock'));
      for (const [ref, fill] of outcomes) {
        if (fill.ok)
          assert.ok(
            bookA.holds[ref] !== undefined && positions.includes(lockRef(ref)),
            `${ref}: answered filled, a position on both sides`,
          );
      }
      for (const lock of positions)
        assert.ok(bookA.holds[lock.slice(0, -':lock'.length)] !== undefined, `${lock}: the taker's side of the position`);
      assert.equal(bookB.accounts[makerAccount(maker)]?.locked, String(20n * BigInt(positions.length)), 'each position locked once');
      // Whether those fills were then refused or answered after resends depends on how fast everything
      // reconnected: either way the restart came while they were asked.
      assert.ok(spanningFills > 0, 'the restart came while fills were asked');
    });
  },
);

test(
  'every call sent again and again before its answer (at least once): the first answer stands, nothing moves twice',
  { skip },
  async () => {
    await withCluster(async () => {
      // Resent every millisecond: each call reaches its owner several times before its answer is durable.
      const eager = new MoneyCalls(fixture.nc, { deadlineMs: 5_000, resendMs: 1 });
      const N = 10;
      const maker = makerOn(B);
      const users = Array.from({ length: 2 * N }, (_, i) => userOn(i % 2 === 0 ? A : B, `eager${i}`));
      const creditAll = () =>
        Promise.all([
          eager.call(partitionOfName(creditRef('fund-maker')), {
            op: 'credit',
            account: makerAccount(maker),
            amountMicros: 100n * BigInt(N),
            key: 'fund-maker',
          }),
          ...users.map((user, i) =>
            eager.call(partitionOfName(creditRef(`fund-${i}`)), {
              op: 'credit',
              account: userAccount(user),
              amountMicros: 50n,
              key: `fund-${i}`,
            }),
          ),
        ]);
      assert.ok((await creditAll()).every((answer) => answer.ok));
      await waitFor(async () => (await available(B, makerAccount(maker))) === 100n * BigInt(N), { what: 'the maker funded once' });
      const fills = await Promise.all(
        users.map(async (user, i) => {
          const home = partitionOfUser(user);
          const ref = `rfq:eager-${i}`;
          assert.equal((await eager.call(home, { op: 'reserve', userId: user, amountMicros: 50n, ref })).ok, true);
          const fill = await eager.call(home, { op: 'fill', ref, filledMicros: 50n, makerAddress: maker, liabilityMicros: 100n });
          if (!fill.ok) assert.equal((await eager.call(home, { op: 'release', ref })).ok, true);
          return fill;
        }),
      );
      assert.equal(fills.filter((fill) => fill.ok).length, N, JSON.stringify(fills));
      const calls = users.length * 2 + fills.filter((fill) => !fill.ok).length + users.length + 1;
      const received = (await look(A)).callsReceived + (await look(B)).callsReceived;
      assert.ok(received > calls, `the owners received ${received} sends of ${calls} calls: repeats arrived`);
      const makerBook = (await look(B)).accounts[makerAccount(maker)]!;
      assert.deepEqual([makerBook.available, makerBook.locked], ['0', String(100n * BigInt(N))], 'funded once, locked once per fill');
      for (const user of users) {
        const buckets = (await look(MAP.ownerOf(userAccount(user)))).accounts[userAccount(user)]!;
        assert.equal(
          BigInt(buckets.available ?? '0') + BigInt(buckets.at_risk ?? '0'),
          50n,
          `${user}: credited once, its stake at risk at most once`,
        );
      }
    });
  },
);

test('what is not a money call its owner decides is refused INVALID, and the node goes on', { skip }, async () => {
  await withCluster(async () => {
    const raw = async (partition: number, bytes: Uint8Array) =>
      decode<MoneyReply>((await fixture.nc.request(subjects.partitionMoney(partition), bytes, { timeout: 2_000 })).data);
    /** A request as MoneyCalls sends it (an id, a call, its facts), whatever the call. */
    const request = (call: unknown) => encode({ id: randomUUID(), call, facts: [] });
    const invalid = { ok: false, code: 'INVALID' };
    const taker = userOn(A, 'strict');
    const home = partitionOfUser(taker);
    assert.deepEqual(await raw(home, new Uint8Array([0xc1, 0xff, 0x00])), invalid, 'bytes that are no msgpack');
    assert.deepEqual(
      await raw(home, request({ op: 'reserve', userId: taker, amountMicros: -5n, ref: 'rfq:x' })),
      invalid,
      'a negative amount',
    );
    assert.deepEqual(
      await raw(home, request({ op: 'reserve', userId: taker, amountMicros: 5, ref: 'rfq:x' })),
      invalid,
      'an amount that is no BigInt',
    );
    assert.deepEqual(await raw(home, request({ op: 'mint', account: userAccount(taker) })), invalid, 'no such call');
    const elsewhere = userOn(B, 'strict');
    assert.deepEqual(
      await raw(home, request({ op: 'reserve', userId: elsewhere, amountMicros: 5n, ref: 'rfq:x' })),
      invalid,
      "a reservation of a user this node does not own (a stale map): refused, where the owner's assertion would stop it",
    );
    assert.deepEqual(
      await callFor(home, { op: 'fill', ref: 'rfq:never', filledMicros: 5n, makerAddress: makerOn(B), liabilityMicros: 5n }),
      {
        ok: false,
        code: 'ABORTED',
      },
    );
    assert.deepEqual(await raw(home, encode({ call: { op: 'release', ref: 'rfq:x' }, facts: [] })), invalid, 'no request id');
    // What the owner asserts of callers in its own process, refused here instead of stopping it.
    assert.deepEqual(
      await raw(partitionOfName(creditRef('k')), request({ op: 'credit', account: 'nobody', amountMicros: 5n, key: 'k' })),
      invalid,
    );
    assert.deepEqual(await raw(0, request({ op: 'withdraw', account: PROTOCOL, amountMicros: 5n, ref: 'withdrawal:p' })), invalid);
    assert.deepEqual(
      await raw(0, request({ op: 'pay_prize', contestId: 'none', ref: 'entry:1', userId: taker, amountMicros: 5n })),
      invalid,
    );
    assert.deepEqual(await raw(home, request({ op: 'collect', contestId: 'none', ref: 'entry:1' })), invalid);
    assert.equal((await credit(PROTOCOL, 50n, 'fund-protocol')).ok, true);
    await waitFor(async () => (await available(A, PROTOCOL)) === 50n, { what: 'the protocol funded' });
    assert.deepEqual(await callFor(0, { op: 'open_pool', contestId: 'c1', amountMicros: 30n }), { ok: true, isReplay: false });
    assert.deepEqual(
      await raw(0, request({ op: 'close_pool', contestId: 'c1', expectedMicros: 29n })),
      invalid,
      'a pool closed expecting less than it holds',
    );
    assert.deepEqual(await callFor(0, { op: 'close_pool', contestId: 'c1', expectedMicros: 30n }), { ok: true, isMoved: true });
    assert.equal((await credit(userAccount(taker), 100n, 'fund')).ok, true);
    await waitFor(async () => (await available(A, userAccount(taker))) === 100n, { what: 'the taker funded' });
    assert.equal((await callFor(home, { op: 'reserve', userId: taker, amountMicros: 10n, ref: 'rfq:y' })).ok, true);
    assert.deepEqual(
      await raw(home, request({ op: 'fill', ref: 'rfq:y', filledMicros: 11n, makerAddress: makerOn(A), liabilityMicros: 0n })),
      invalid,
      'a fill beyond its reservation',
    );
    assert.deepEqual(await credit(userAccount(taker), 10n, 'after'), { ok: true, isReplay: false }, 'the node still takes calls');
  });
});
