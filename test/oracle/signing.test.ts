// The 41 bytes an oracle signs (contract section 12), checked field by field and against ethers, the
// independent signer: what ethers signs over them, our recovery (both backends) attributes to its address.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Wallet, verifyMessage } from 'ethers';
import { bytesToHex } from '../../src/crypto/hex.js';
import { recoverPersonalSigner } from '../../src/crypto/recover.js';
import { parseSignatureBase64 } from '../../src/crypto/signature.js';
import { ORACLE_REPORT_BYTES, oracleReportBytes } from '../../src/oracle/signing.js';
import { signReport } from '../helpers/oracle.js';

// A fixed key so the vector below is reproducible (the well-known hardhat account 0; never a real key).
const WALLET = new Wallet('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');

describe('oracle report bytes', () => {
  it('are tag, asset padded with zero bytes to 8, ts_ms u64 LE and price_e8 u64 LE: 41 bytes', () => {
    const bytes = oracleReportBytes({ asset: 'BTC', tsMs: 1_764_107_000_000, priceE8: 9_876_543_210_000 });
    assert.equal(bytes.length, ORACLE_REPORT_BYTES);
    assert.equal(ORACLE_REPORT_BYTES, 41);
    assert.equal(Buffer.from(bytes.subarray(0, 17)).toString('latin1'), 'parlayd:oracle:v1');
    assert.deepEqual([...bytes.subarray(17, 25)], [0x42, 0x54, 0x43, 0, 0, 0, 0, 0]);
    const view = new DataView(bytes.buffer);
    assert.equal(view.getBigUint64(25, true), 1_764_107_000_000n);
    assert.equal(view.getBigUint64(33, true), 9_876_543_210_000n);
    assert.equal(bytesToHex(bytes), '7061726c6179643a6f7261636c653a7631' + '4254430000000000' + 'c098f8bc9a010000' + '1082d98ffb080000');
  });

  it('fill the asset field when the symbol has 8 characters, and refuse a longer or empty one', () => {
    const bytes = oracleReportBytes({ asset: 'ABCDEFGH', tsMs: 0, priceE8: 1 });
    assert.equal(Buffer.from(bytes.subarray(17, 25)).toString('latin1'), 'ABCDEFGH');
    assert.throws(() => oracleReportBytes({ asset: 'ABCDEFGHI', tsMs: 0, priceE8: 1 }), RangeError);
    assert.throws(() => oracleReportBytes({ asset: '', tsMs: 0, priceE8: 1 }), RangeError);
  });

  it('refuse values a u64 cannot carry', () => {
    assert.throws(() => oracleReportBytes({ asset: 'BTC', tsMs: -1, priceE8: 1 }), RangeError);
    assert.throws(() => oracleReportBytes({ asset: 'BTC', tsMs: 1.5, priceE8: 1 }), RangeError);
    assert.throws(() => oracleReportBytes({ asset: 'BTC', tsMs: 0, priceE8: 1n << 64n }), RangeError);
    const max = oracleReportBytes({ asset: 'BTC', tsMs: 0, priceE8: (1n << 64n) - 1n });
    assert.equal(bytesToHex(max.subarray(33)), 'ffffffffffffffff');
  });

  it('signed by ethers, recover to the signer with our recovery and with ethers', async () => {
    const report = { asset: 'ETH', ts_ms: 1_764_107_123_456, price_e8: 345_678_000_000 };
    const signed = await signReport(WALLET, report);
    const sig65 = parseSignatureBase64(signed.signature);
    assert.ok(sig65 !== null);
    const bytes = oracleReportBytes({ asset: report.asset, tsMs: report.ts_ms, priceE8: report.price_e8 });
    assert.deepEqual(recoverPersonalSigner(bytes, sig65), { ok: true, address: WALLET.address.toLowerCase() });
    assert.equal(verifyMessage(bytes, '0x' + Buffer.from(sig65).toString('hex')), WALLET.address);
    // The same signature over other bytes (another price) names another signer.
    const other = oracleReportBytes({ asset: report.asset, tsMs: report.ts_ms, priceE8: report.price_e8 + 1 });
    const recovered = recoverPersonalSigner(other, sig65);
    assert.ok(!recovered.ok || recovered.address !== WALLET.address.toLowerCase());
  });
});
