// The load generator's CPU per server thread (bench/load/scenarios/rfq-ladder.ts): the step's share of one
// core for each role the server reports, and the main thread alone for a build that reports none.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatThreads, threadPercents } from '../../bench/load/scenarios/rfq-ladder.js';

test('threadPercents: each role the CPU seconds it used over the wall time, as % of one core; null with no roles', () => {
  const before = new Map([
    ['main', 1.0],
    ['shard-0', 2.0],
    ['other', 0.5],
  ]);
  // A role seen only after (a thread that started during the step) counts from zero.
  const after = new Map([
    ['main', 1.5],
    ['shard-0', 2.8],
    ['other', 0.6],
    ['verify', 0.2],
  ]);
  assert.deepEqual(threadPercents(before, after, 2000), { main: 25, 'shard-0': 40, other: 5, verify: 10 });
  assert.equal(threadPercents(before, new Map(), 2000), null);
});

test('formatThreads: main first, then the roles by name; the main thread alone from an older build', () => {
  const cpu = { serverPercent: 90, clientPercent: 30, serverMainThreadPercent: 44 };
  assert.equal(formatThreads(cpu, { 'shard-0': 40, other: 5, main: 45 }), 'main 45 %, other 5 %, shard-0 40 %');
  assert.equal(formatThreads(cpu, null), 'main 44 %');
});
