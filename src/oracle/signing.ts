// Pure; runs on any thread. The 41 bytes an oracle signs for one price report (contract section 12), with
// EIP-191 personal-sign over them (the verify pool hashes and recovers; crypto/eip191.ts):
//
// | offset | size | field    | encoding                                      |
// |--------|------|----------|-----------------------------------------------|
// | 0      | 17   | tag      | ASCII `parlayd:oracle:v1`                     |
// | 17     | 8    | asset    | ASCII symbol, right-padded with zero bytes    |
// | 25     | 8    | ts_ms    | u64 little-endian                             |
// | 33     | 8    | price_e8 | u64 little-endian (price × 10^8)              |
//
// The tag keeps a report's signature from meaning anything else this service verifies (orders are 51+ bytes
// starting with an address, the maker challenge 75 bytes starting with its own tag).

export const ORACLE_TAG = 'parlayd:oracle:v1';
export const ORACLE_TAG_BYTES = 17;
export const ORACLE_ASSET_BYTES = 8;
export const ORACLE_REPORT_BYTES = ORACLE_TAG_BYTES + ORACLE_ASSET_BYTES + 8 + 8; // 41

const TAG = new TextEncoder().encode(ORACLE_TAG);
const U64_MAX = (1n << 64n) - 1n;
/** What an asset symbol may be in the signed bytes: printable ASCII without NUL, 1..8 bytes. */
const ASSET_RE = /^[\x21-\x7e]{1,8}$/;

export interface PriceReportFields {
  asset: string;
  tsMs: bigint | number;
  priceE8: bigint | number;
}

/** The 41 signed bytes of a report. Throws RangeError on an input the format cannot carry. */
export function oracleReportBytes(report: PriceReportFields): Uint8Array {
  if (typeof report.asset !== 'string' || !ASSET_RE.test(report.asset)) {
    throw new RangeError('oracle report asset must be 1..8 printable ASCII characters');
  }
  const tsMs = toU64(report.tsMs, 'ts_ms');
  const priceE8 = toU64(report.priceE8, 'price_e8');
  const bytes = new Uint8Array(ORACLE_REPORT_BYTES);
  bytes.set(TAG, 0);
  for (let i = 0; i < report.asset.length; i++) bytes[ORACLE_TAG_BYTES + i] = report.asset.charCodeAt(i);
  const view = new DataView(bytes.buffer);
  view.setBigUint64(ORACLE_TAG_BYTES + ORACLE_ASSET_BYTES, tsMs, true);
  view.setBigUint64(ORACLE_TAG_BYTES + ORACLE_ASSET_BYTES + 8, priceE8, true);
  return bytes;
}

function toU64(value: bigint | number, name: string): bigint {
  if (typeof value === 'number' && !Number.isSafeInteger(value)) throw new RangeError(`${name} must be an integer`);
  const big = BigInt(value);
  if (big < 0n || big > U64_MAX) throw new RangeError(`${name} must fit in a u64`);
  return big;
}
