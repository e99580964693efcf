// The ledger check's runner with several shards (src/ledger/check-runner.ts), on a real LMDB and its real
// check worker: a difference that stays is reported after the rechecks, and a check whose shards cannot land
// what is on its way (LMDB cannot commit: a full disk) answers 503 in bounded time instead of hanging. The
// shards' settling is the one thing stood in for: a function that resolves, and one that never does.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { Registry } from 'prom-client';
import { ApiError } from '../../src/lib/errors.js';
import { userAccount } from '../../src/records/ledger.js';
import { LedgerCheckRunner, SETTLE_TIMEOUT_MS } from '../../src/ledger/check-runner.js';
import { rfqRef } from '../../src/records/rfqs.js';
import { openStore } from '../../src/store/db.js';
import { waitFor } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'parlayd-check-runner-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const store = openStore(dir);
after(() => store.close());
const clock = { nowMs: () => Date.now() };
const stray = rfqRef('00000000-0000-7000-8000-000000000001');

const runner = (settle: () => Promise<void>) => new LedgerCheckRunner(dir, undefined, clock, store, () => [], new Registry(), settle);

test('a hold for no record: reported after every recheck, each after the shards settled', async () => {
  await store.db('holds').put(stray, { account: userAccount('u1'), bucket: 'reserved', amountMicros: '5' });
  let settled = 0;
  const check = await runner(async () => void settled++).run();
  assert.equal(check.ok, false);
  assert.deepEqual(check.differences.map((d) => [d.reason, d.ref ?? null]).sort(), [
    ['hold_without_record', stray],
    ['holds', null],
  ]);
  assert.equal(settled, 3, 'checked in four snapshots, the shards settled before each of the last three');
});

test('shards that cannot settle: the check answers OVERLOADED after the bound, not never', { timeout: 10_000 }, async () => {
  const startMs = Date.now();
  await assert.rejects(runner(() => new Promise(() => {})).run(), (err: unknown) => err instanceof ApiError && err.code === 'OVERLOADED');
  assert.ok(Date.now() - startMs >= SETTLE_TIMEOUT_MS);
});

test('a caller who asks while a check runs gets the next one, which sees what it wrote before asking', async () => {
  const late = rfqRef('00000000-0000-7000-8000-000000000002');
  await store.db('holds').put(stray, { account: userAccount('u1'), bucket: 'reserved', amountMicros: '5' });
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let settles = 0;
  const checks = runner(() => (settles++ === 0 ? held : Promise.resolve()));
  const first = checks.run(); // its first snapshot has `stray` only, then it waits for the shards
  await waitFor(() => settles === 1, { what: 'the first check past its first snapshot' });
  await store.db('holds').put(late, { account: userAccount('u2'), bucket: 'reserved', amountMicros: '7' });
  const second = checks.run();
  release();
  const refs = (check: Awaited<typeof first>) => check.differences.flatMap((d) => (d.ref === undefined ? [] : [d.ref])).sort();
  assert.deepEqual(refs(await first), [stray], 'the first reports what its first snapshot saw');
  assert.deepEqual(refs(await second), [stray, late].sort(), 'the second saw the hold written before it asked');
  await store.db('holds').remove(late);
});
