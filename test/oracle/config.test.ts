// Oracle configuration (contract section 12, docs/oracle.md): defaults, the address list, and a bad value
// stopping the start with a message naming the variable.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config/config.js';

const A = '0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed'; // EIP-55's own example
const B = '0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359';

describe('oracle configuration', () => {
  it('defaults: no oracle signer, 60 s staleness, one day of grace', () => {
    const config = loadConfig({});
    assert.deepEqual([config.oracleAddresses, config.oracleMaxStalenessMs, config.resolutionGraceMs], [[], 60_000, 86_400_000]);
  });

  it('takes addresses with or without 0x, lowercased, each once', () => {
    const config = loadConfig({ PARLAYD_ORACLE_ADDRESSES: `${A}, ${B.slice(2)},${A.toLowerCase()}` });
    assert.deepEqual(config.oracleAddresses, [A.toLowerCase(), B]);
  });

  it('a bad value stops the start, naming the variable', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ PARLAYD_ORACLE_ADDRESSES: `${A},nope` }, /^PARLAYD_ORACLE_ADDRESSES entry 2 "nope" is not an address/],
      [{ PARLAYD_ORACLE_ADDRESSES: A.replace('a', 'A') }, /^PARLAYD_ORACLE_ADDRESSES entry 1/],
      [{ PARLAYD_ORACLE_MAX_STALENESS_MS: '-1' }, /^PARLAYD_ORACLE_MAX_STALENESS_MS="-1" is invalid/],
      [{ PARLAYD_RESOLUTION_GRACE_MS: '1.5' }, /^PARLAYD_RESOLUTION_GRACE_MS="1.5" is invalid/],
    ];
    for (const [env, message] of cases) {
      assert.throws(
        () => loadConfig(env),
        (err: unknown) => err instanceof ConfigError && message.test(err.message),
      );
    }
  });
});
