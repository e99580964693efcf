// Main thread, for dispatch.ts. Recognizes the two frames a maker sends most, a decline and a quote, in the
// exact text the SDK and the JSON.stringify of a plain object write (fields in schema order, no whitespace,
// ASCII), and returns the message straight from the bytes: no UTF-8 decode, no JSON.parse, and no second
// pass of the compiled schema, because each byte is checked here against that same schema as it is read.
// At 1,000 makers every rfq brings 1,000 declines; their decode, parse and schema check were a fifth of
// the main thread (docs/performance.md, "Where the main thread's time goes at 500/s; hot maker frames").
//
// Pure but for a memory of request ids that changes no result (HotFrameReader). It returns either exactly the message the general path (inbound.ts: decode, JSON.parse, compiled
// schema) would accept for the frame, or null, which means only "not in this exact form": the caller then
// takes the general path, which gives any bad frame its documented error. So every frame it refuses is
// still answered by the general path, and it only has to be right about what it accepts. Forms recognized:
//   {"type":"decline","request_id":"<uuid>"}
//   {"type":"quote","request_id":"<uuid>","quote_id":"<id>","odds":<number>,"max_wager_micros":"<micros>"}
//   the same quote with ,"last_look":true or ,"last_look":false before the closing brace
// where <uuid> is lowercase hyphenated (contract/common.ts Uuid), <id> 1-64 printable ASCII characters with
// no `"` or `\` (QuoteId: 1-64 characters; an escape goes the general way), <number> a JSON number that
// isQuoteOdds accepts, and <micros> ^[1-9][0-9]{0,18}$ (PositiveMicrosString).
// Bounds: one pass over at most MAX_HOT_FRAME_BYTES; a longer frame is not one of these.
import { isQuoteOdds, type DeclineMessage, type QuoteMessage } from '../contract/mm.js';

const DECLINE_HEAD = ascii('{"type":"decline","request_id":"');
const QUOTE_HEAD = ascii('{"type":"quote","request_id":"');
const QUOTE_ID_KEY = ascii('","quote_id":"');
const ODDS_KEY = ascii('","odds":');
const MAX_WAGER_KEY = ascii(',"max_wager_micros":"');
const LAST_LOOK_TRUE = ascii(',"last_look":true}');
const LAST_LOOK_FALSE = ascii(',"last_look":false}');

const UUID_CHARS = 36;
/** The hyphens of a lowercase hyphenated uuid (8-4-4-4-12). */
const isUuidHyphenAt = (offset: number) => offset === 8 || offset === 13 || offset === 18 || offset === 23;
const MAX_QUOTE_ID_CHARS = 64;
/** Odds text longer than this is not a plain decimal with at most 4 places of an odds <= 100,000. */
const MAX_ODDS_CHARS = 24;
const MAX_MICROS_DIGITS = 19;
/** The longest quote of the forms above (ids and numbers at their longest), with room to spare. */
const MAX_HOT_FRAME_BYTES = 320;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const CLOSE_BRACE = 0x7d;
const SPACE = 0x20;
const TILDE = 0x7e;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_1 = 0x31;
const DIGIT_9 = 0x39;
const LOWER_A = 0x61;
const LOWER_F = 0x66;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

// WHATWG's "latin1" is windows-1252, which reads ASCII as ASCII: all these frames are.
const latin1 = new TextDecoder('latin1');

function ascii(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

const isDigit = (b: number | undefined) => b !== undefined && b >= DIGIT_0 && b <= DIGIT_9;
const isLowerHex = (b: number) => (b >= DIGIT_0 && b <= DIGIT_9) || (b >= LOWER_A && b <= LOWER_F);

/** True when `bytes` holds `word` at `at`. */
function hasAt(bytes: Uint8Array, at: number, word: Uint8Array): boolean {
  if (at + word.length > bytes.length) return false;
  for (let k = 0; k < word.length; k++) if (bytes[at + k] !== word[k]) return false;
  return true;
}

/** True when bytes [at, at + 36) are a lowercase hyphenated uuid. */
function isUuidAt(bytes: Uint8Array, at: number): boolean {
  if (at + UUID_CHARS > bytes.length) return false;
  for (let k = 0; k < UUID_CHARS; k++) {
    const b = bytes[at + k]!;
    if (isUuidHyphenAt(k) ? b !== MINUS : !isLowerHex(b)) return false;
  }
  return true;
}

/** The end of a JSON number starting at `at` (just past it), or -1 when the text there is not one. */
function jsonNumberEnd(bytes: Uint8Array, at: number): number {
  let i = at;
  if (bytes[i] === MINUS) i++;
  if (bytes[i] === DIGIT_0) i++;
  else if (isDigit(bytes[i])) while (isDigit(bytes[i])) i++;
  else return -1;
  if (bytes[i] === DOT) {
    i++;
    if (!isDigit(bytes[i])) return -1;
    while (isDigit(bytes[i])) i++;
  }
  if (bytes[i] === LOWER_E || bytes[i] === UPPER_E) {
    i++;
    if (bytes[i] === PLUS || bytes[i] === MINUS) i++;
    if (!isDigit(bytes[i])) return -1;
    while (isDigit(bytes[i])) i++;
  }
  return i;
}

/**
 * Request ids remembered (a power of two): more than the rfqs whose answers arrive interleaved. At 1,000
 * makers with 32 RFQs in flight, a socket's next frame is often another rfq's decline, so remembering only
 * the last id missed about every other frame.
 */
const REMEMBERED_IDS = 64;
/**
 * The id characters a slot is chosen by: its last six, random in the service's ids (rfq/ids.ts; the first
 * ones are the shard and the creation time, the same for every rfq of a second).
 */
const SLOT_CHARS_FROM = 30;
const SLOT_CHARS_TO = 36;

/**
 * Reads the hot forms (above) for one gateway. It remembers request ids it read, as bytes and as strings, in
 * REMEMBERED_IDS slots chosen by the id's characters: the answers to one rfq come in together (1,000
 * declines of one rfq at 1,000 makers, the 10 quotes of one at 10), so most frames repeat an id, and then
 * neither the id's check nor a new string is needed. A slot holds only an id that passed the check; the
 * memory changes no result, only what a result costs. Bounds: 64 ids of 36 bytes and their strings.
 */
export class HotFrameReader {
  readonly #idBytes = new Uint8Array(REMEMBERED_IDS * UUID_CHARS);
  readonly #ids: (string | null)[] = new Array<string | null>(REMEMBERED_IDS).fill(null);

  /**
   * The decline or quote in `frame` (a text frame's bytes) when it is in one of the exact forms above, as the
   * general path would accept it (a quote's last_look absent when the frame has none); null otherwise.
   */
  read(frame: ArrayBuffer): DeclineMessage | QuoteMessage | null {
    if (frame.byteLength > MAX_HOT_FRAME_BYTES) return null;
    const bytes = new Uint8Array(frame);
    if (hasAt(bytes, 0, DECLINE_HEAD)) return this.#decline(bytes);
    if (hasAt(bytes, 0, QUOTE_HEAD)) return this.#quote(bytes);
    return null;
  }

  #decline(bytes: Uint8Array): DeclineMessage | null {
    const idAt = DECLINE_HEAD.length;
    const closeAt = idAt + UUID_CHARS;
    if (bytes.length !== closeAt + 2 || bytes[closeAt] !== QUOTE || bytes[closeAt + 1] !== CLOSE_BRACE) return null;
    const requestId = this.#requestIdAt(bytes, idAt);
    return requestId === null ? null : { type: 'decline', request_id: requestId };
  }

  #quote(bytes: Uint8Array): QuoteMessage | null {
    const requestIdAt = QUOTE_HEAD.length;
    if (!hasAt(bytes, requestIdAt + UUID_CHARS, QUOTE_ID_KEY)) return null;
    // quote_id: printable ASCII up to its closing quote; a backslash (an escape) or anything else goes the general way.
    const quoteIdAt = requestIdAt + UUID_CHARS + QUOTE_ID_KEY.length;
    let i = quoteIdAt;
    for (;;) {
      const b = bytes[i];
      if (b === undefined || b < SPACE || b > TILDE || b === BACKSLASH) return null;
      if (b === QUOTE) break;
      i++;
    }
    const quoteIdEnd = i;
    if (quoteIdEnd === quoteIdAt || quoteIdEnd - quoteIdAt > MAX_QUOTE_ID_CHARS) return null;
    // odds: a JSON number (what JSON.parse would read: Number() of the same text gives the same double).
    if (!hasAt(bytes, quoteIdEnd, ODDS_KEY)) return null;
    const oddsAt = quoteIdEnd + ODDS_KEY.length;
    const oddsEnd = jsonNumberEnd(bytes, oddsAt);
    if (oddsEnd === -1 || oddsEnd - oddsAt > MAX_ODDS_CHARS) return null;
    // max_wager_micros: ^[1-9][0-9]{0,18}$ inside its quotes.
    if (!hasAt(bytes, oddsEnd, MAX_WAGER_KEY)) return null;
    const microsAt = oddsEnd + MAX_WAGER_KEY.length;
    const first = bytes[microsAt];
    if (first === undefined || first < DIGIT_1 || first > DIGIT_9) return null;
    i = microsAt + 1;
    while (isDigit(bytes[i])) i++;
    const microsEnd = i;
    if (microsEnd - microsAt > MAX_MICROS_DIGITS || bytes[microsEnd] !== QUOTE) return null;
    // The end: `}`, or last_look and `}`, and nothing after.
    const restAt = microsEnd + 1;
    let lastLook: boolean | undefined;
    if (bytes.length === restAt + 1 && bytes[restAt] === CLOSE_BRACE) lastLook = undefined;
    else if (bytes.length === restAt + LAST_LOOK_TRUE.length && hasAt(bytes, restAt, LAST_LOOK_TRUE)) lastLook = true;
    else if (bytes.length === restAt + LAST_LOOK_FALSE.length && hasAt(bytes, restAt, LAST_LOOK_FALSE)) lastLook = false;
    else return null;
    const requestId = this.#requestIdAt(bytes, requestIdAt);
    if (requestId === null) return null;
    const frameText = asText(bytes);
    const odds = Number(frameText.slice(oddsAt, oddsEnd));
    if (!isQuoteOdds(odds)) return null;
    const message: QuoteMessage = {
      type: 'quote',
      request_id: requestId,
      quote_id: frameText.slice(quoteIdAt, quoteIdEnd),
      odds,
      max_wager_micros: frameText.slice(microsAt, microsEnd),
    };
    if (lastLook !== undefined) message.last_look = lastLook;
    return message;
  }

  /** The lowercase hyphenated uuid at bytes [at, at + 36) as a string; null when it is not one. */
  #requestIdAt(bytes: Uint8Array, at: number): string | null {
    if (at + UUID_CHARS > bytes.length) return null;
    let hash = 0;
    for (let k = SLOT_CHARS_FROM; k < SLOT_CHARS_TO; k++) hash = (hash * 31 + bytes[at + k]!) | 0;
    const slot = hash & (REMEMBERED_IDS - 1);
    const from = slot * UUID_CHARS;
    const remembered = this.#idBytes;
    const id = this.#ids[slot]!;
    if (id !== null) {
      let k = 0;
      while (k < UUID_CHARS && bytes[at + k] === remembered[from + k]) k++;
      if (k === UUID_CHARS) return id;
    }
    if (!isUuidAt(bytes, at)) return null;
    const place = remembered.subarray(from, from + UUID_CHARS);
    place.set(bytes.subarray(at, at + UUID_CHARS));
    const text = latin1.decode(place);
    this.#ids[slot] = text;
    return text;
  }
}

/**
 * The frame as text, once it is known to be one of the forms above (ASCII throughout, so latin1 reads it as
 * UTF-8 would): one native decode, and each field a slice of it.
 */
function asText(bytes: Uint8Array): string {
  return latin1.decode(bytes);
}
