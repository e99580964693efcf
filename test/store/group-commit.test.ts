// store/group-commit.ts on a real LMDB environment in a temp dir: transactions asked for in one turn share
// one synchronous commit, a throw rolls back only its own writes, and what resolved is on disk (a second
// process opening the directory reads it).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/db.js';

test('one turn, one group: a throwing transaction is rolled back alone and the rest is durable', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'parlayd-group-'));
  const store = openStore(dir, { isGroupCommit: true });
  try {
    const meta = store.db<string>('meta');
    let groupTxnId = 0;
    const first = store.transact(() => {
      groupTxnId = store.root.getWriteTxnId();
      void meta.put('a', 'one');
      return 'first';
    });
    const failing = store.transact(() => {
      void meta.put('b', 'never');
      assert.equal(meta.get('b'), 'never', 'a transaction reads its own writes');
      throw new Error('refused');
    });
    const third = store.transact(() => {
      assert.equal(meta.get('a'), 'one', 'an earlier transaction of the group is visible to a later one');
      assert.equal(meta.get('b'), undefined, 'the rolled-back write is not');
      void meta.put('c', 'three');
      return store.root.getWriteTxnId();
    });
    assert.equal(await first, 'first');
    await assert.rejects(failing, /refused/);
    assert.equal(await third, groupTxnId, 'all three ran in the same LMDB write transaction');
    assert.deepEqual([meta.get('a'), meta.get('b'), meta.get('c')], ['one', undefined, 'three']);

    // A later turn is a new group.
    const later = await store.transact(() => store.root.getWriteTxnId());
    assert.ok(later > groupTxnId);

    // Another process sees exactly what was resolved.
    const script = `import { open } from 'lmdb';
      const root = open({ path: ${JSON.stringify(dir)}, noSubdir: false, maxDbs: 64 });
      const meta = root.openDB({ name: 'meta', sharedStructuresKey: Symbol.for('structures') });
      console.log(JSON.stringify([meta.get('a'), meta.get('b') ?? null, meta.get('c')]));`;
    const seen = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: process.cwd(), encoding: 'utf8' });
    assert.deepEqual(JSON.parse(seen), ['one', null, 'three']);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
