// Any thread; pure. The byte format of a shard's journal (its write-ahead log): one file, a 16-byte header,
// then records back to back. A record is
//
//   u32 LE payload length | u32 LE crc32 of (seq ‖ payload) | u64 LE seq | payload
//
// Sequence numbers start at 1 and rise by one per record, so a scan needs no index: the log ends at the first
// record that is not whole (a torn write: the process or the machine stopped inside an append), whose
// checksum does not match (a sector that never reached the disk), or whose seq is not the next one (bytes of
// an earlier life of a preallocated or reused file). Zeros read as length 0, which no record has, so a file
// extended with zeros ahead of its writes ends where its records do.
import assert from 'node:assert/strict';
import { crc32 } from 'node:zlib';

export const FILE_MAGIC = Buffer.from('PLYJRNL1', 'latin1');
export const FILE_HEADER_BYTES = 16;
export const RECORD_HEADER_BYTES = 16;
/** Largest payload a record may carry: a shard's record is a few hundred bytes; this bounds a scan's read. */
export const MAX_PAYLOAD_BYTES = 1 << 20;

/** The file's header: the magic, then the seq of its first record (a log cut at a snapshot starts past 1). */
export function encodeFileHeader(firstSeq: number): Buffer {
  assert.ok(Number.isSafeInteger(firstSeq) && firstSeq >= 1, `first seq ${firstSeq}`);
  const header = Buffer.alloc(FILE_HEADER_BYTES);
  FILE_MAGIC.copy(header, 0);
  header.writeUIntLE(firstSeq, 8, 6);
  return header;
}

/** The first seq a file's header names, or null when the bytes are not a journal's header. */
export function decodeFileHeader(bytes: Uint8Array): number | null {
  if (bytes.length < FILE_HEADER_BYTES) return null;
  const header = Buffer.from(bytes.buffer, bytes.byteOffset, FILE_HEADER_BYTES);
  if (!header.subarray(0, 8).equals(FILE_MAGIC)) return null;
  const firstSeq = header.readUIntLE(8, 6);
  return firstSeq >= 1 && header.readUInt16LE(14) === 0 ? firstSeq : null;
}

/** Bytes one record of `payloadBytes` takes in the file. */
export function recordBytes(payloadBytes: number): number {
  return RECORD_HEADER_BYTES + payloadBytes;
}

/** Writes record `seq` carrying `payload` at `offset` of `target`, which must have room; returns the end. */
export function encodeRecordInto(target: Buffer, offset: number, seq: number, payload: Uint8Array): number {
  assert.ok(payload.length >= 1 && payload.length <= MAX_PAYLOAD_BYTES, `payload of ${payload.length} bytes`);
  assert.ok(Number.isSafeInteger(seq) && seq >= 1, `seq ${seq}`);
  target.writeUInt32LE(payload.length, offset);
  target.writeUIntLE(seq, offset + 8, 6);
  target.writeUInt16LE(0, offset + 14);
  target.set(payload, offset + RECORD_HEADER_BYTES);
  const end = offset + recordBytes(payload.length);
  target.writeUInt32LE(crc32(target.subarray(offset + 8, end)), offset + 4);
  return end;
}

/** Why a scan stopped where it did. */
export type ScanStop =
  /** The bytes ended exactly after a whole record (or there were none). */
  | 'end'
  /** A record header or payload runs past the bytes: more may follow in the next chunk, or the tail is torn. */
  | 'partial'
  /** A length of 0 (zeros after the last record) or above MAX_PAYLOAD_BYTES. */
  | 'bad-length'
  | 'bad-checksum'
  /** A whole, checksummed record whose seq is not the next one. */
  | 'bad-seq';

export interface ScanResult {
  /** Offset just past the last good record (relative to the bytes given). */
  endOffset: number;
  /** The seq of the last good record, or `expectedSeq - 1` when none was found. */
  lastSeq: number;
  stop: ScanStop;
}

/**
 * Walks the records of `bytes` from offset 0, expecting `expectedSeq` first, and calls `visit` with each good
 * one (`payload` is a view into `bytes`: copy what outlives the call). Stops at the first record that is not
 * whole and good.
 */
export function scanRecords(bytes: Buffer, expectedSeq: number, visit: (seq: number, payload: Buffer) => void): ScanResult {
  let offset = 0;
  let seq = expectedSeq;
  for (;;) {
    if (offset === bytes.length) return { endOffset: offset, lastSeq: seq - 1, stop: 'end' };
    if (bytes.length - offset < RECORD_HEADER_BYTES) return { endOffset: offset, lastSeq: seq - 1, stop: 'partial' };
    const payloadBytes = bytes.readUInt32LE(offset);
    if (payloadBytes === 0 || payloadBytes > MAX_PAYLOAD_BYTES) return { endOffset: offset, lastSeq: seq - 1, stop: 'bad-length' };
    const end = offset + recordBytes(payloadBytes);
    if (end > bytes.length) return { endOffset: offset, lastSeq: seq - 1, stop: 'partial' };
    if (crc32(bytes.subarray(offset + 8, end)) !== bytes.readUInt32LE(offset + 4)) {
      return { endOffset: offset, lastSeq: seq - 1, stop: 'bad-checksum' };
    }
    if (bytes.readUIntLE(offset + 8, 6) !== seq || bytes.readUInt16LE(offset + 14) !== 0) {
      return { endOffset: offset, lastSeq: seq - 1, stop: 'bad-seq' };
    }
    visit(seq, bytes.subarray(offset + RECORD_HEADER_BYTES, end));
    seq++;
    offset = end;
  }
}
