// The maker protection's max_locked_micros on the journal engine (src/mm/protection.ts), whose ledger is a
// read model written behind: a fill's check reads the maker's locked bucket after a read barrier. A barrier
// the shards refuse (503 OVERLOADED while they are far behind) must leave that fill unchecked, not reject
// into the desk (an unhandled rejection stops the process); the maker's next fill checks again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { overloaded } from '../../src/lib/errors.js';
import { NO_LIMITS, Protection } from '../../src/mm/protection.js';
import { openStore } from '../../src/store/db.js';

const MAKER = '0x' + 'cd'.repeat(20);

test('max_locked_micros behind a read barrier: a refused barrier leaves the fill unchecked, the next fill trips', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-protection-'));
  const store = openStore(dir);
  try {
    let isOverloaded = true;
    let lockedMicros = 0n;
    const protection = new Protection(
      store,
      () => lockedMicros,
      () => (isOverloaded ? Promise.reject(overloaded()) : Promise.resolve(lockedMicros)),
    );
    await protection.setLimits('maker', MAKER, { ...NO_LIMITS, max_locked_micros: '1000' });

    lockedMicros = 1_500n; // past the limit, but the barrier before the read is refused
    const refused = protection.onFill(MAKER, 100n, 1_000);
    assert.ok(refused instanceof Promise, 'checked after the barrier');
    assert.equal(await refused, null, 'unchecked, and no rejection');
    assert.equal(protection.trippedOf(MAKER), null);

    isOverloaded = false;
    assert.equal(await protection.onFill(MAKER, 100n, 2_000), 'MAX_LOCKED', 'the next fill reads the bucket and trips');
    assert.equal(protection.trippedOf(MAKER), 'MAX_LOCKED');
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
