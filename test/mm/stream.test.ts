// A maker stream's ring (src/mm/stream.ts) with its text outside V8's heap (src/mm/byte-arena.ts), against a
// model that keeps every frame as a string: whatever is appended, evicted (by count, age or the own-bytes
// cap) or dropped from the shared arena, a replay returns exactly the frames the model says are held and
// worth replaying, in seq order, and never skips an own frame it still claims to hold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { ByteArena } from '../../src/mm/byte-arena.js';
import { ALWAYS_REPLAY, MakerStream, NEVER_REPLAY, OWN_BYTES_PER_MESSAGE, stamp } from '../../src/mm/stream.js';

type Op =
  | { kind: 'own'; text: string; deadline: 'always' | 'never' }
  | { kind: 'broadcast'; text: string; deadlineInMs: number }
  | { kind: 'wait'; ms: number };

const textArb = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }), // multi-byte UTF-8
  { arbitrary: fc.string({ minLength: 900, maxLength: 3_000 }), weight: 2 }, // past a 256-byte share: the own-bytes cap
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('own' as const), text: textArb, deadline: fc.constantFrom('always' as const, 'never' as const) }),
  fc.record({ kind: fc.constant('broadcast' as const), text: textArb, deadlineInMs: fc.integer({ min: 1, max: 500 }) }),
  fc.record({ kind: fc.constant('wait' as const), ms: fc.integer({ min: 1, max: 400 }) }),
);

interface Held {
  seq: number;
  text: string;
  atMs: number;
  deadlineMs: number;
  isShared: boolean;
}

test('replays exactly what a model of the ring holds, through count, age, byte-cap and shared-arena evictions', () => {
  fc.assert(
    fc.property(
      fc.array(opArb, { minLength: 1, maxLength: 300 }),
      fc.integer({ min: 16, max: 64 }),
      fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
      (ops, maxMessages, resumeFraction) => {
        const limits = { replayMs: 1_000, maxMessages };
        // A small shared arena, so that rfq texts do leave it during a run.
        const shared = new ByteArena(4 * 1024, 1024);
        const stream = new MakerStream('session', '0xmaker', limits, shared);
        const model: Held[] = [];
        let nowMs = 1_000_000;
        for (const op of ops) {
          if (op.kind === 'wait') {
            nowMs += op.ms;
            continue;
          }
          const seq = stream.nextSeq;
          const text = `${seq}:${op.text}`; // unique, so that a replay is matched frame by frame
          let frame: string;
          if (op.kind === 'own') {
            const deadlineMs = op.deadline === 'always' ? ALWAYS_REPLAY : NEVER_REPLAY;
            // The bytes a socket writes behind the seq (socket-writer.ts) are the text's UTF-8.
            const body = stream.appendOwn(text, nowMs, deadlineMs);
            assert.equal(Buffer.from(body.bytes).toString('utf8'), text);
            frame = stamp(stream.lastSeq, text);
            model.push({ seq, text, atMs: nowMs, deadlineMs, isShared: false });
          } else {
            const place = { chunk: 0, offset: 0, length: 0 };
            shared.put(text, place);
            frame = stamp(stream.appendShared(place, nowMs, nowMs + op.deadlineInMs), text);
            model.push({ seq, text, atMs: nowMs, deadlineMs: nowMs + op.deadlineInMs, isShared: true });
          }
          assert.equal(frame, stamp(seq, text));
        }
        stream.prune(nowMs);
        // What the stream holds is a suffix of what was appended: the newest frames, at most maxMessages, none
        // older than replayMs, and its own text within its byte share.
        const held = model.filter((f) => f.seq >= stream.oldestHeldSeq);
        assert.equal(stream.size, held.length);
        assert.equal(stream.oldestHeldSeq + stream.size, stream.nextSeq);
        assert.ok(held.length <= maxMessages);
        assert.ok(held.every((f) => f.atMs >= nowMs - limits.replayMs));
        const ownBytes = held.filter((f) => !f.isShared).reduce((sum, f) => sum + Buffer.byteLength(f.text), 0);
        assert.ok(ownBytes <= maxMessages * OWN_BYTES_PER_MESSAGE, `${ownBytes} own bytes held`);
        // A resume from anywhere in what is held (half of the runs from its start).
        const lastSeq = stream.oldestHeldSeq - 1 + Math.floor(Math.max(0, resumeFraction * 2 - 1) * stream.size);
        const expected = held
          .filter((f) => f.seq > lastSeq)
          .filter((f) => f.deadlineMs !== NEVER_REPLAY && (f.deadlineMs === ALWAYS_REPLAY || f.deadlineMs > nowMs));
        const replayed = stream.heldAfter(lastSeq, nowMs);
        // Every own frame comes back; a shared one may be missing only when the shared arena let it go.
        assert.deepEqual(
          replayed.filter((text) => expected.some((f) => !f.isShared && f.text === text)).length,
          expected.filter((f) => !f.isShared).length,
        );
        let cursor = 0;
        for (const f of expected) {
          if (replayed[cursor] === f.text) cursor++;
          else assert.ok(f.isShared, `own frame ${f.seq} missing from the replay`);
        }
        assert.equal(cursor, replayed.length, 'the replay has frames the model does not, or out of order');
      },
    ),
    { numRuns: 500, endOnFailure: true }, // no shrinking: shrinking 300 operations of 3 KB texts takes minutes
  );
});

test('within its bounds a stream evicts nothing', () => {
  const stream = new MakerStream('session', '0xmaker', { replayMs: 1_000, maxMessages: 64 }, new ByteArena(0));
  const texts = Array.from({ length: 64 }, (_, i) => `"type":"quote_ack","request_id":"r${i}","quote_id":"q${i}"}`);
  for (const text of texts) stream.append(text, 5_000, ALWAYS_REPLAY);
  assert.equal(stream.size, 64);
  assert.deepEqual(stream.heldAfter(0, 5_500), texts);
  stream.append('"type":"heartbeat"}', 5_000, NEVER_REPLAY); // the 65th: the oldest makes room
  assert.equal(stream.oldestHeldSeq, 2);
  assert.deepEqual(stream.heldAfter(1, 5_500), texts.slice(1));
  stream.prune(6_001); // all past replayMs
  assert.equal(stream.size, 0);
  assert.equal(stream.oldestHeldSeq, stream.nextSeq);
});

test('the shared arena drops its oldest chunks past its cap and reads them as gone', () => {
  const arena = new ByteArena(4 * 1024, 1024);
  const places = Array.from({ length: 40 }, (_, i) => {
    const place = { chunk: 0, offset: 0, length: 0 };
    arena.put(`rfq ${i} `.padEnd(300, 'x'), place);
    return place;
  });
  assert.ok(arena.heldBytes <= 4 * 1024 + 1024);
  assert.equal(arena.read(places[0]!.chunk, places[0]!.offset, places[0]!.length), null);
  const last = places.at(-1)!;
  assert.equal(arena.read(last.chunk, last.offset, last.length), 'rfq 39 '.padEnd(300, 'x'));
  assert.ok(arena.firstChunk > 0);
});

test('a text longer than a chunk gets a chunk of its own and reads back whole', () => {
  const arena = new ByteArena(0, 64);
  const place = { chunk: 0, offset: 0, length: 0 };
  const text = 'é'.repeat(100); // 200 bytes
  arena.put('short', { chunk: 0, offset: 0, length: 0 });
  arena.put(text, place);
  assert.equal(place.length, 200);
  assert.equal(arena.read(place.chunk, place.offset, place.length), text);
  arena.dropBefore(place.chunk + 1);
  assert.equal(arena.read(place.chunk, place.offset, place.length), null);
});
