// The journal's record format (src/wal/record.ts): a scan returns exactly the whole, good records before the
// first damage, whatever the damage is.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { encodeRecordInto, recordBytes, scanRecords, type ScanStop } from '../../src/wal/record.js';

function encodeAll(payloads: readonly Uint8Array[], firstSeq = 1): { bytes: Buffer; ends: number[] } {
  const bytes = Buffer.alloc(payloads.reduce((sum, p) => sum + recordBytes(p.length), 0));
  const ends: number[] = [];
  let offset = 0;
  payloads.forEach((payload, i) => {
    offset = encodeRecordInto(bytes, offset, firstSeq + i, payload);
    ends.push(offset);
  });
  return { bytes, ends };
}

function scanAll(bytes: Buffer, firstSeq = 1): { payloads: Buffer[]; seqs: number[]; endOffset: number; stop: ScanStop } {
  const payloads: Buffer[] = [];
  const seqs: number[] = [];
  const { endOffset, stop } = scanRecords(bytes, firstSeq, (seq, payload) => {
    seqs.push(seq);
    payloads.push(Buffer.from(payload));
  });
  return { payloads, seqs, endOffset, stop };
}

const payloadsArb = fc.array(fc.uint8Array({ minLength: 1, maxLength: 300 }), { minLength: 1, maxLength: 20 });

describe('journal records', () => {
  it('scans back every record it encoded, in seq order, and stops at the end', () => {
    fc.assert(
      fc.property(payloadsArb, fc.integer({ min: 1, max: 2 ** 40 }), (payloads, firstSeq) => {
        const { bytes } = encodeAll(payloads, firstSeq);
        const scan = scanAll(bytes, firstSeq);
        assert.deepEqual(
          scan.payloads.map((p) => [...p]),
          payloads.map((p) => [...p]),
        );
        assert.deepEqual(
          scan.seqs,
          payloads.map((_, i) => firstSeq + i),
        );
        assert.equal(scan.endOffset, bytes.length);
        assert.equal(scan.stop, 'end');
      }),
    );
  });

  it('a cut anywhere (a torn append) keeps exactly the records wholly before it', () => {
    fc.assert(
      fc.property(payloadsArb, fc.nat(), (payloads, cutSeed) => {
        const { bytes, ends } = encodeAll(payloads);
        const cut = cutSeed % (bytes.length + 1);
        const whole = ends.filter((end) => end <= cut);
        const scan = scanAll(bytes.subarray(0, cut));
        assert.equal(scan.payloads.length, whole.length);
        assert.equal(scan.endOffset, whole.at(-1) ?? 0);
        assert.equal(scan.stop, scan.endOffset === cut ? 'end' : 'partial');
      }),
    );
  });

  it('a damaged byte ends the log at the record that holds it', () => {
    fc.assert(
      fc.property(payloadsArb, fc.nat(), fc.integer({ min: 1, max: 255 }), (payloads, at, xor) => {
        const { bytes, ends } = encodeAll(payloads);
        const position = at % bytes.length;
        bytes[position] = bytes[position]! ^ xor;
        const damaged = ends.findIndex((end) => end > position);
        const scan = scanAll(bytes);
        assert.equal(scan.payloads.length, damaged, `byte ${position} lies in record ${damaged}`);
        assert.notEqual(scan.stop, 'end');
      }),
    );
  });

  it('zeros after the last record (a file written ahead) end the log there', () => {
    const { bytes } = encodeAll([Buffer.from('a'), Buffer.from('bc')]);
    const scan = scanAll(Buffer.concat([bytes, Buffer.alloc(4096)]));
    assert.deepEqual(scan.payloads.map(String), ['a', 'bc']);
    assert.equal(scan.endOffset, bytes.length);
    assert.equal(scan.stop, 'bad-length');
  });

  it('a good record with another seq (an earlier life of the same bytes) ends the log', () => {
    const first = encodeAll([Buffer.from('one'), Buffer.from('two')]).bytes;
    const stale = encodeAll([Buffer.from('old')], 7).bytes;
    const scan = scanAll(Buffer.concat([first, stale]));
    assert.deepEqual(scan.payloads.map(String), ['one', 'two']);
    assert.equal(scan.stop, 'bad-seq');
  });
});
