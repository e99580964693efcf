// Pure: the hot decline and quote forms read from their bytes (src/mm/hot-frames.ts) against the general path
// (src/mm/inbound.ts: decode, JSON.parse, the compiled schema). The one property: for any frame, the hot
// reader returns null or exactly the message the general path accepts. Checked on the forms themselves and
// on every one-byte change, cut and insertion of them, so a frame the schema refuses can never slip through
// (it goes the general way and gets its documented error, test/mm/gateway.test.ts).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { HotFrameReader } from '../../src/mm/hot-frames.js';
import { decodeFrame, isMakerMessage } from '../../src/mm/inbound.js';

const bytesOf = (text: string) => new TextEncoder().encode(text);
const frameOf = (bytes: Uint8Array): ArrayBuffer => bytes.slice().buffer;

/** What the general path accepts for the frame, or null when it answers it with an error. */
function general(frame: ArrayBuffer): Record<string, unknown> | null {
  const value = decodeFrame(frame, false);
  return value !== null && isMakerMessage(value) ? value : null;
}

// One reader for the whole file, as a gateway has: its memory of request ids is warm with the forms' valid
// id when a changed one comes, and must not let the change through.
const reader = new HotFrameReader();
/** As a gateway reads a frame: the shared reader, and a fresh one must agree. */
function hotMakerMessage(frame: ArrayBuffer) {
  const hot = reader.read(frame);
  assert.deepStrictEqual(new HotFrameReader().read(frame), hot);
  return hot;
}

/** The property, for one frame: hot is null, or the general path accepts the frame as the same message. */
function assertAgrees(frame: ArrayBuffer, label: string): void {
  const hot = hotMakerMessage(frame);
  if (hot === null) return;
  assert.deepStrictEqual(hot, general(frame), `${label}: ${new TextDecoder().decode(frame)}`);
}

const REQUEST_ID = '3f1c2a9e-8b7d-4c6a-9e2f-1a2b3c4d5e6f';
const quoteText = (fields: { quoteId?: string; odds?: string; micros?: string; tail?: string } = {}) =>
  `{"type":"quote","request_id":"${REQUEST_ID}","quote_id":"${fields.quoteId ?? 'q-1'}","odds":${fields.odds ?? '2.5'},` +
  `"max_wager_micros":"${fields.micros ?? '100000000000'}"${fields.tail ?? ''}}`;
const declineText = (requestId = REQUEST_ID) => `{"type":"decline","request_id":"${requestId}"}`;

describe('hot maker frames', () => {
  it('reads the SDK forms of decline and quote as the general path does, field for field', () => {
    const forms = [
      declineText(),
      declineText(randomUUID()),
      quoteText(),
      quoteText({ tail: ',"last_look":true' }),
      quoteText({ tail: ',"last_look":false' }),
      quoteText({ odds: '1.0001', micros: '1' }),
      quoteText({ odds: '100000', micros: '9'.repeat(19) }),
      quoteText({ odds: '2.50', quoteId: 'x'.repeat(64) }),
      quoteText({ odds: '25e-1' }),
      quoteText({ odds: '1.5E0' }),
      quoteText({ odds: '3.0000000000' }),
      // Every printable ASCII character but the two that need an escape.
      quoteText({ quoteId: " !#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[]^_`abcdefghijklmnop".slice(0, 64) }),
      quoteText({ quoteId: 'qrstuvwxyz{|}~' }),
      JSON.stringify({ type: 'quote', request_id: randomUUID(), quote_id: 'sdk', odds: 1.85, max_wager_micros: '7', last_look: false }),
    ];
    for (const text of forms) {
      const frame = frameOf(bytesOf(text));
      const hot = hotMakerMessage(frame);
      assert.notEqual(hot, null, text);
      assert.deepStrictEqual(hot, JSON.parse(text), text);
      assert.deepStrictEqual(hot, general(frame), text);
    }
  });

  it('remembers request ids without letting a different one through, in the same slot or another', () => {
    const other = randomUUID();
    const lastCharChanged = `${other.slice(0, 35)}${other.endsWith('0') ? '1' : '0'}`;
    const sequence = [
      REQUEST_ID,
      REQUEST_ID,
      other,
      REQUEST_ID,
      other,
      other,
      `${other.slice(0, 35)}g`,
      other,
      lastCharChanged,
      REQUEST_ID.toUpperCase(),
      REQUEST_ID,
    ];
    // More ids than slots, twice over: slots are reused and must still answer only their own id.
    const many = Array.from({ length: 200 }, () => randomUUID());
    for (const requestId of [...sequence, ...many, ...many, ...sequence]) {
      const frame = frameOf(bytesOf(declineText(requestId)));
      assert.deepStrictEqual(hotMakerMessage(frame), general(frame), requestId);
    }
  });

  it('leaves every other form to the general path: whitespace, another order, escapes, other messages', () => {
    const others = [
      `{ "type":"decline","request_id":"${REQUEST_ID}"}`,
      `${declineText()} `,
      `{"request_id":"${REQUEST_ID}","type":"decline"}`,
      quoteText({ quoteId: 'q\\"1' }),
      quoteText({ quoteId: 'q\\u00e9' }),
      quoteText({ quoteId: 'é' }),
      `{"type":"quote","request_id":"${REQUEST_ID}","quote_id":"q","max_wager_micros":"1","odds":2}`,
      `{"type":"quote_cancel","request_id":"${REQUEST_ID}","quote_id":"q"}`,
      '{"type":"pong"}',
    ];
    for (const text of others) assert.equal(hotMakerMessage(frameOf(bytesOf(text))), null, text);
  });

  it('refuses what the schema refuses, in the exact forms too', () => {
    const refused = [
      declineText(REQUEST_ID.toUpperCase()),
      declineText(REQUEST_ID.replaceAll('-', '')),
      declineText(`${REQUEST_ID}0`),
      quoteText({ odds: '1' }),
      quoteText({ odds: '1.00001' }),
      quoteText({ odds: '100000.0001' }),
      quoteText({ odds: '-2.5' }),
      quoteText({ odds: '02.5' }),
      quoteText({ odds: '2.' }),
      quoteText({ odds: '1e400' }),
      quoteText({ micros: '0' }),
      quoteText({ micros: '01' }),
      quoteText({ micros: '1'.repeat(20) }),
      quoteText({ quoteId: '' }),
      quoteText({ quoteId: 'x'.repeat(65) }),
      quoteText({ tail: ',"last_look":"yes"' }),
      quoteText({ tail: ',"last_look":true,"size":1' }),
    ];
    for (const text of refused) {
      const frame = frameOf(bytesOf(text));
      assert.equal(hotMakerMessage(frame), null, text);
      assert.equal(general(frame), null, `the general path refuses it too: ${text}`);
    }
  });

  it('agrees with the general path on every one-byte change, cut and insertion of the forms', () => {
    const seeds = [declineText(), quoteText({ quoteId: 'q9', odds: '1.25', tail: ',"last_look":true' }), quoteText({ odds: '12e1' })];
    // Bytes that matter to the forms: structure, digits and their edges, hex edges, case, escapes, non-ASCII.
    const replacements = [
      0x20, 0x22, 0x2c, 0x2d, 0x2e, 0x30, 0x31, 0x39, 0x3a, 0x41, 0x45, 0x46, 0x5c, 0x61, 0x65, 0x66, 0x67, 0x7d, 0x7f, 0xc3, 0x0a,
    ];
    let checked = 0;
    for (const seed of seeds) {
      const bytes = bytesOf(seed);
      for (let at = 0; at <= bytes.length; at++) {
        if (at < bytes.length) {
          for (const b of replacements) {
            const changed = bytes.slice();
            changed[at] = b;
            assertAgrees(frameOf(changed), `byte ${at} := ${b}`);
            checked++;
          }
          const cut = new Uint8Array([...bytes.subarray(0, at), ...bytes.subarray(at + 1)]);
          assertAgrees(frameOf(cut), `byte ${at} cut`);
          assertAgrees(frameOf(bytes.slice(0, at)), `truncated at ${at}`);
        }
        for (const b of replacements) {
          const inserted = new Uint8Array([...bytes.subarray(0, at), b, ...bytes.subarray(at)]);
          assertAgrees(frameOf(inserted), `byte ${b} inserted at ${at}`);
          checked++;
        }
      }
    }
    assert.ok(checked > 5000, `${checked} frames`);
  });
});
