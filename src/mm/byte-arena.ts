// Main thread. Text kept for a while outside V8's heap: the maker streams' frames held for a resume
// (stream.ts). Held as JavaScript strings, every frame outlived a young-generation collection and was copied
// and promoted by it: ~3.5 KB per RFQ with 10 makers, which made each scavenge of the main thread take
// 5-10 ms at 250-2,000 RFQ/s (docs/performance.md, "Main-thread scavenges"). Bytes in Buffers are external
// memory: a collection never copies them.
//
// An arena is a queue of fixed-size chunks written front to back; text goes at the end of the newest chunk
// (or alone in a chunk of its own size when larger than a chunk) and is found again by its place. Chunks are
// dropped oldest first, by the owner (`dropBefore`) or to stay under the byte cap; a place in a dropped
// chunk reads as null. Bounds: the cap, plus one chunk.

export const DEFAULT_CHUNK_BYTES = 16 * 1024;

/** Where a text was put: chunk number (monotonic), byte offset in it, byte length. */
export interface ArenaPlace {
  chunk: number;
  offset: number;
  length: number;
}

/**
 * A place and its text's bytes: what a socket writes (socket-writer.ts). `bytes` is a view of the chunk, so
 * the text stays readable through it after the arena drops the chunk (a chunk is never written again).
 */
export interface ArenaBytes extends ArenaPlace {
  readonly bytes: Uint8Array;
}

/** The place `place` of `chunk` (what put returned for it), with a view of its bytes. */
export function bytesAt(chunk: Buffer, place: ArenaPlace): ArenaBytes {
  const { offset, length } = place;
  return { chunk: place.chunk, offset, length, bytes: new Uint8Array(chunk.buffer, chunk.byteOffset + offset, length) };
}

export class ByteArena {
  /** Chunks still held; #chunks[i] is chunk number #firstChunk + i. */
  readonly #chunks: Buffer[] = [];
  #firstChunk = 0;
  /** Bytes used in the newest chunk. */
  #used = 0;
  #heldBytes = 0;

  constructor(
    /** Held bytes past which the oldest chunks are dropped (0: never dropped for size, only by dropBefore). */
    private readonly capBytes: number,
    private readonly chunkBytes = DEFAULT_CHUNK_BYTES,
  ) {}

  /** Number of the chunk the next write goes to, or a later one: what a caller compares places against. */
  get nextChunk(): number {
    return this.#firstChunk + this.#chunks.length;
  }

  /** Number of the oldest chunk held (nextChunk when none is): places below it read as null. */
  get firstChunk(): number {
    return this.#firstChunk;
  }

  get heldBytes(): number {
    return this.#heldBytes;
  }

  /** Puts `text` (UTF-8) at the end; its place is written into `place`; returns the chunk it is in. */
  put(text: string, place: ArenaPlace): Buffer {
    const length = Buffer.byteLength(text);
    let chunk = this.#chunks.at(-1);
    if (chunk === undefined || this.#used + length > chunk.length) {
      chunk = Buffer.allocUnsafe(Math.max(length, this.chunkBytes));
      this.#chunks.push(chunk);
      this.#heldBytes += chunk.length;
      this.#used = 0;
    }
    chunk.write(text, this.#used, length, 'utf8');
    place.chunk = this.#firstChunk + this.#chunks.length - 1;
    place.offset = this.#used;
    place.length = length;
    this.#used += length;
    // Never the chunk just written: its text must read back until the next put at least.
    while (this.capBytes > 0 && this.#heldBytes > this.capBytes && this.#chunks.length > 1) this.#dropOldest();
    return chunk;
  }

  /** The text at a place, or null when its chunk was dropped. */
  read(chunk: number, offset: number, length: number): string | null {
    const buffer = this.#chunks[chunk - this.#firstChunk];
    return chunk < this.#firstChunk || buffer === undefined ? null : buffer.toString('utf8', offset, offset + length);
  }

  /** Drops every chunk numbered below `chunk` (none of their places will be read again). */
  dropBefore(chunk: number): void {
    while (this.#firstChunk < chunk && this.#chunks.length > 0) this.#dropOldest();
    if (this.#chunks.length === 0) {
      this.#firstChunk = Math.max(this.#firstChunk, chunk);
      this.#used = 0;
    }
  }

  #dropOldest(): void {
    this.#heldBytes -= this.#chunks.shift()!.length;
    this.#firstChunk++;
  }
}
