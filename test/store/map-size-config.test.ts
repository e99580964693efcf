// PARLAYD_LMDB_MAP_SIZE_MB (issue 21): validated by the config schema like every variable; the default is the
// 8 GiB the store always had.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { DEFAULT_MAP_SIZE_BYTES } from '../../src/store/db.js';

describe('PARLAYD_LMDB_MAP_SIZE_MB', () => {
  it('defaults to the store default, 8 GiB', () => {
    assert.equal(loadConfig({}).lmdbMapSizeMb * 1024 * 1024, DEFAULT_MAP_SIZE_BYTES);
    assert.equal(DEFAULT_MAP_SIZE_BYTES, 8 * 1024 ** 3);
  });

  it('takes a size in MiB', () => {
    assert.equal(loadConfig({ PARLAYD_LMDB_MAP_SIZE_MB: '64' }).lmdbMapSizeMb, 64);
  });

  for (const bad of ['0', '-1', '1.5', 'big', '1048577']) {
    it(`refuses ${JSON.stringify(bad)}, naming the variable`, () => {
      assert.throws(
        () => loadConfig({ PARLAYD_LMDB_MAP_SIZE_MB: bad }),
        (err: unknown) => err instanceof ConfigError && err.message.startsWith('PARLAYD_LMDB_MAP_SIZE_MB='),
      );
    });
  }
});
