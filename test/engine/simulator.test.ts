// The engine's owners under the seeded simulator (test/helpers/engine-sim.ts): takers, makers, credits,
// withdrawals and contests (pools, entries, collection, prizes); crashes at random journal positions, restarts
// from snapshot and journal, lost messages; after each seed the ledger across owners, every acknowledged
// operation and every two-phase lock are checked. `npm run simulate` runs thousands of seeds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { simulate, type SimOptions } from '../helpers/engine-sim.js';

const BASE: Omit<SimOptions, 'seed'> = { owners: 3, operations: 10_000, users: 12, makers: 4, crashChance: 0.002 };

for (const seed of [1, 2, 3, 4]) {
  test(`seed ${seed}: 10,000 operations on 3 owners with crashes leave the ledger exact and nothing acknowledged lost`, () => {
    const report = simulate({ ...BASE, seed });
    assert.deepEqual(report.failures, [], `seed ${seed} (replay: npm run simulate -- --seed ${seed})`);
    // The run did what it is for: crashes happened, money moved between owners, locks went both ways.
    assert.ok(report.crashes >= 3, `only ${report.crashes} crashes`);
    assert.ok(report.acked.fills > 50 && report.acked.remoteFills > 10, JSON.stringify(report.acked));
    assert.ok(report.acked.settlements > 20 && report.acked.withdrawals > 20, JSON.stringify(report.acked));
    assert.ok(report.acked.entries > 20 && report.acked.prizes > 5, JSON.stringify(report.acked));
    assert.ok(report.check.worldInMicros > 0n && report.check.totalMicros > 0n);
  });
}

for (const seed of [5, 6]) {
  test(`seed ${seed}: clients that send calls again before their answer (at least once) leave the same checks clean`, () => {
    const report = simulate({ ...BASE, seed, repeatChance: 0.3 });
    assert.deepEqual(report.failures, [], `seed ${seed} (replay: npm run simulate -- --seed ${seed} --repeat 0.3)`);
    assert.ok(report.repeated > 300, `only ${report.repeated} calls repeated`);
    assert.ok(report.crashes >= 3 && report.acked.remoteFills > 10, JSON.stringify({ crashes: report.crashes, ...report.acked }));
  });
}

test('one owner: every fill is local, and the same checks hold', () => {
  const report = simulate({ ...BASE, owners: 1, seed: 7 });
  assert.deepEqual(report.failures, []);
  assert.equal(report.acked.remoteFills, 0);
  assert.ok(report.acked.fills > 50);
});

test('the checks catch a lock voided blindly (a planted fault: the fill owner always answers "never filled")', () => {
  const failures = [1, 2, 3].flatMap((seed) => simulate({ ...BASE, seed, voidBlindly: true }).failures);
  assert.ok(
    failures.some((failure) => /liability was never settled/.test(failure)),
    `no failure named a position whose lock was voided under it: ${failures.slice(0, 5).join('; ')}`,
  );
});

test("the checks catch a lock's grant sent before its record is durable (a planted fault; a lock's request may go at once)", () => {
  const failures = [1, 2, 3].flatMap((seed) => simulate({ ...BASE, seed, grantsBeforeDurable: true }).failures);
  assert.ok(
    failures.some((failure) => /liability was never settled/.test(failure)),
    `no failure named a position whose grant was lost with its owner's crash: ${failures.slice(0, 5).join('; ')}`,
  );
});
