// The thread of the actor that owns it (a shard). A journal: the actor appends records and goes on at once;
// each group is written on libuv's thread pool, one group at a time, and `onDurable(seq)` tells the actor, on
// its own thread, that every record up to `seq` is on the disk. The actor holds back whatever promises
// durability (a 201, a fill told to a maker) until then, and never waits for I/O itself.
//
// The file is opened O_DSYNC, so a group's one `pwrite` returns only once its data (and the size the data
// needs) is on the disk, as a write followed by fdatasync would: one trip to the thread pool and back per
// group instead of two. Each trip waits for the owner's busy loop to take its completion: under load a 3 KB
// write that takes 0.07 ms alone took 0.4-1.7 ms (docs/performance.md, "The journal's group write").
//
// Group commit: records appended while a group is on its way to the disk form the next group, so the group
// size follows the load by itself and the flush rate never needs to exceed what the disk sustains. The first
// append of an idle journal waits for the end of its event-loop turn, so that a turn's appends share one flush.
//
// A failed write is fatal (`onFailure`): after a failed flush the kernel may have dropped the dirty pages, so
// nothing later in the file can be trusted to be on the disk; the owner crashes and recovers from what the
// file holds. The exception is a write refused for want of space (a full disk): it is tried again, with a
// backoff, until space returns, and nothing behind it is told durable meanwhile. The retry writes the whole
// group again at the same place, so whatever part of it the kernel took is written whole by the write that
// succeeds.
import assert from 'node:assert/strict';
import {
  closeSync,
  constants,
  existsSync,
  fdatasyncSync as fdatasyncSyncNow,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  rmSync,
  write,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import {
  decodeFileHeader,
  encodeFileHeader,
  encodeRecordInto,
  FILE_HEADER_BYTES,
  MAX_PAYLOAD_BYTES,
  recordBytes,
  scanRecords,
  type ScanStop,
} from './record.js';

export interface JournalOptions {
  /** Bytes appended and not yet handed to the disk, at most: past it `append` refuses (the owner sheds load). */
  maxPendingBytes: number;
  /**
   * Zeros written ahead of the records, this many bytes at a time (0: the file grows with each group). On this
   * machine's ext4 a flush that also grows the file writes its metadata too (docs/durability.md has the figures).
   */
  preallocateBytes: number;
  /** Every record up to `seq` is durable. Called on the owner's thread, in seq order, once per group. */
  onDurable(seq: number): void;
  /** A write or flush failed: the journal is stopped and takes no more records. */
  onFailure(error: Error): void;
}

/** What opening found: the records it replayed (through `visit`), and what it cut from the end. */
export interface JournalRecovery {
  firstSeq: number;
  /** The seq of the last whole, good record, or `firstSeq - 1` when there is none. */
  lastSeq: number;
  /** Bytes past the last good record that were cut: a torn append, or zeros written ahead. */
  cutBytes: number;
  stop: ScanStop;
}

/** Bytes read per call while replaying: large enough to cost few syscalls, small next to the heap. */
const SCAN_CHUNK_BYTES = 4 << 20;

export class Journal {
  readonly #fd: number;
  readonly #options: JournalOptions;
  /** Records appended and not yet handed to the disk: `#fill[0, #fillBytes)`. */
  #fill: Buffer;
  #fillBytes = 0;
  /** The buffer of the group on its way to the disk; swapped with `#fill` at each flush. */
  #spare: Buffer;
  #nextSeq: number;
  /** Where the next group goes in the file. */
  #fileOffset: number;
  /** End of the zeros written ahead (equal to `#fileOffset` when not preallocating). */
  #allocatedEnd: number;
  #isFlushing = false;
  #isScheduled = false;
  #failure: Error | null = null;
  #closed: Promise<void> | null = null;
  #waitsForSpaceAtClose = false;
  #onIdle: (() => void) | null = null;

  private constructor(fd: number, options: JournalOptions, nextSeq: number, fileOffset: number) {
    this.#fd = fd;
    this.#options = options;
    this.#nextSeq = nextSeq;
    this.#fileOffset = fileOffset;
    this.#allocatedEnd = fileOffset + options.preallocateBytes;
    const initialBytes = Math.min(options.maxPendingBytes, 64 << 10);
    this.#fill = Buffer.allocUnsafe(initialBytes);
    this.#spare = Buffer.allocUnsafe(initialBytes);
  }

  /**
   * Opens the journal at `path` (creating it, with its first record to be `firstSeqIfNew`), replays every good
   * record through `visit` in seq order, and cuts whatever follows the last good one, durably, before any
   * append. Synchronous: it runs once, before the owner takes work.
   */
  static open(
    path: string,
    options: JournalOptions,
    visit: (seq: number, payload: Buffer) => void,
    firstSeqIfNew = 1,
  ): { journal: Journal; recovery: JournalRecovery } {
    assert.ok(options.maxPendingBytes >= recordBytes(MAX_PAYLOAD_BYTES), 'maxPendingBytes must hold the largest record');
    // Read-write and never O_APPEND: groups are written at their own offsets (pwrite), which append mode ignores.
    const isNew = !existsSync(path);
    const fd = openSync(path, constants.O_RDWR | constants.O_CREAT | DURABLE_WRITES, 0o600);
    try {
      if (isNew) syncDirectory(dirname(path));
      return Journal.#recover(fd, options, visit, firstSeqIfNew);
    } catch (error) {
      // A new file that could not get its header (a full disk) must not stay behind: a file named for a seq
      // holds that seq's records, and an empty one would stand beside the file that does.
      closeSync(fd);
      if (isNew) {
        rmSync(path, { force: true });
        syncDirectory(dirname(path)); // an empty file left by a crash would stand beside the file that has its seqs
      }
      throw error;
    }
  }

  static #recover(
    fd: number,
    options: JournalOptions,
    visit: (seq: number, payload: Buffer) => void,
    firstSeqIfNew: number,
  ): { journal: Journal; recovery: JournalRecovery } {
    const fileBytes = fstatSync(fd).size;
    const header = Buffer.alloc(FILE_HEADER_BYTES);
    const headerRead = fileBytes >= FILE_HEADER_BYTES ? readSync(fd, header, 0, FILE_HEADER_BYTES, 0) : 0;
    let firstSeq = headerRead === FILE_HEADER_BYTES ? decodeFileHeader(header) : null;
    if (firstSeq === null) {
      // A new file, or one cut inside its header before any record could have been acknowledged.
      assert.ok(fileBytes < FILE_HEADER_BYTES || header.every((b) => b === 0), 'not a journal file');
      firstSeq = firstSeqIfNew;
      ftruncateSync(fd, 0);
      writeSync(fd, encodeFileHeader(firstSeq), 0, FILE_HEADER_BYTES, 0);
      fdatasyncSync(fd);
    }
    const { endOffset, lastSeq, stop } = scanFile(fd, fileBytes, firstSeq, visit);
    const currentBytes = Math.max(fileBytes, FILE_HEADER_BYTES);
    // Cut, or flushed as it is: what was replayed is acted on (answers, the read model), so it must be on the
    // disk and not only in the page cache, which a crash of the machine would take.
    if (endOffset < currentBytes) ftruncateSync(fd, endOffset);
    fdatasyncSync(fd);
    if (options.preallocateBytes > 0) {
      // The first step of zeros before the owner takes work, so no early flush pays for it.
      writeSync(fd, Buffer.alloc(options.preallocateBytes), 0, options.preallocateBytes, endOffset);
      fdatasyncSync(fd);
    }
    const journal = new Journal(fd, options, lastSeq + 1, endOffset);
    return { journal, recovery: { firstSeq, lastSeq, cutBytes: currentBytes - endOffset, stop } };
  }

  /** The seq the next append will get. */
  get nextSeq(): number {
    return this.#nextSeq;
  }

  /** Bytes appended and not yet handed to the disk. */
  get pendingBytes(): number {
    return this.#fillBytes;
  }

  /**
   * Appends one record and returns its seq, or null (nothing appended) when the journal holds
   * `maxPendingBytes` not yet written: the disk is behind, and the owner should refuse new work.
   */
  append(payload: Uint8Array): number | null {
    assert.equal(this.#failure, null, 'append to a failed journal');
    assert.equal(this.#closed, null, 'append to a closed journal');
    const bytes = recordBytes(payload.length);
    if (this.#fillBytes + bytes > this.#options.maxPendingBytes) return null;
    if (this.#fillBytes + bytes > this.#fill.length) this.#fill = grown(this.#fill, this.#fillBytes, this.#fillBytes + bytes);
    const seq = this.#nextSeq;
    // The seq is taken only once its record is encoded: a refused payload (wal/record.ts bounds) leaves no hole.
    this.#fillBytes = encodeRecordInto(this.#fill, this.#fillBytes, seq, payload);
    this.#nextSeq++;
    if (!this.#isFlushing && !this.#isScheduled) {
      this.#isScheduled = true;
      setImmediate(this.#flush);
    }
    return seq;
  }

  /**
   * Writes what was appended at once, on this thread (O_DSYNC: durable when it returns), and reports it durable.
   * For the owner's opening only, before it takes work: the records it makes there (the interrupted RFQs'
   * releases, a migration's opening state) could pass maxPendingBytes before the first turn's flush, and a
   * start that fails so fails again at every start. Does nothing while a group is on its way.
   */
  writePendingSync(): void {
    if (this.#isFlushing || this.#fillBytes === 0 || this.#failure !== null) return;
    const lastSeq = this.#nextSeq - 1;
    for (let written = 0; written < this.#fillBytes;) {
      written += writeSync(this.#fd, this.#fill, written, this.#fillBytes - written, this.#fileOffset + written);
    }
    this.#fileOffset += this.#fillBytes;
    this.#allocatedEnd = Math.max(this.#allocatedEnd, this.#fileOffset); // zeros written ahead start past these
    this.#fillBytes = 0;
    this.#options.onDurable(lastSeq);
  }

  /**
   * Flushes what was appended, then closes the file. Appends after this are programmer errors. A group the disk
   * refuses for want of space fails the journal, unless `waitForSpace`: then it is tried again until space
   * returns (a rotation's old file, whose records the owner still has to tell durable). At a stop nothing
   * waits: what the disk refused was never told durable, so failing it loses nothing acknowledged.
   */
  close({ waitForSpace = false }: { waitForSpace?: boolean } = {}): Promise<void> {
    this.#waitsForSpaceAtClose ||= waitForSpace;
    this.#closed ??= new Promise<void>((resolve, reject) => {
      // A journal that failed closes rejected: what it held past its last durable report may not be on the
      // disk, and a rotation must not then tell the next file's records durable.
      const finish = (): void => {
        closeSync(this.#fd);
        if (this.#failure === null) resolve();
        else reject(this.#failure);
      };
      if (!this.#isFlushing && !this.#isScheduled) finish();
      else this.#onIdle = finish;
    });
    return this.#closed;
  }

  readonly #flush = (): void => {
    this.#isScheduled = false;
    if (this.#fillBytes === 0 || this.#failure !== null) return this.#idle();
    this.#isFlushing = true;
    const group = this.#fill;
    const groupBytes = this.#fillBytes;
    const lastSeq = this.#nextSeq - 1;
    this.#fill = this.#spare;
    this.#fillBytes = 0;
    this.#spare = group;
    const position = this.#fileOffset;
    this.#fileOffset += groupBytes;
    let retryMs = FIRST_SPACE_RETRY_MS;
    const write = (): void =>
      writeAll(this.#fd, group, groupBytes, position, (writeError) => {
        if (
          writeError !== null &&
          isOutOfSpace(writeError as NodeJS.ErrnoException) &&
          (this.#closed === null || this.#waitsForSpaceAtClose)
        ) {
          // A full disk: nothing of this group is told yet, and the whole group is written again at the same
          // place. Appends go on piling up behind it, to maxPendingBytes, past which the owner refuses new
          // work; accepted work's ends wait.
          setTimeout(write, retryMs);
          retryMs = Math.min(retryMs * 2, MAX_SPACE_RETRY_MS);
          return;
        }
        if (writeError) return this.#fail(writeError);
        // O_DSYNC: the write's return is its flush.
        this.#isFlushing = false;
        this.#options.onDurable(lastSeq);
        // What was appended while this group was on its way is the next group: no turn waited for.
        if (this.#fillBytes > 0 && this.#failure === null) this.#flush();
        else this.#idle();
      });
    this.#ensureAllocated(position + groupBytes, write);
  };

  /**
   * When preallocating and the records would come within half a step of the zeros' end, writes the next step of
   * zeros first (one write every `preallocateBytes` of records), then calls `next`.
   */
  #ensureAllocated(end: number, next: () => void): void {
    const step = this.#options.preallocateBytes;
    if (step === 0 || end + step / 2 <= this.#allocatedEnd) return next();
    // Every record written so far ends at or before #allocatedEnd, so the zeros cover none of them.
    const from = this.#allocatedEnd;
    this.#allocatedEnd = Math.max(from, end) + step;
    const zeros = Buffer.alloc(this.#allocatedEnd - from);
    writeAll(this.#fd, zeros, zeros.length, from, (error) => (error ? this.#fail(error) : next()));
  }

  #fail(error: Error): void {
    this.#failure = error;
    this.#isFlushing = false;
    this.#options.onFailure(error);
    this.#idle();
  }

  #idle(): void {
    const onIdle = this.#onIdle;
    this.#onIdle = null;
    onIdle?.();
  }
}

/** Replays the records of the open file `fd` after its header; what `scanRecords` says of the last chunk. */
function scanFile(
  fd: number,
  fileBytes: number,
  firstSeq: number,
  visit: (seq: number, payload: Buffer) => void,
): { endOffset: number; lastSeq: number; stop: ScanStop } {
  let chunk = Buffer.allocUnsafe(SCAN_CHUNK_BYTES);
  let chunkStart = FILE_HEADER_BYTES;
  let carried = 0;
  let expectedSeq = firstSeq;
  for (;;) {
    const wanted = Math.min(chunk.length - carried, fileBytes - (chunkStart + carried));
    const read = wanted > 0 ? readSync(fd, chunk, carried, wanted, chunkStart + carried) : 0;
    const available = carried + read;
    const isLastChunk = chunkStart + available >= fileBytes;
    const scan = scanRecords(chunk.subarray(0, available), expectedSeq, visit);
    expectedSeq = scan.lastSeq + 1;
    if (scan.stop !== 'partial' || isLastChunk) {
      return { endOffset: chunkStart + scan.endOffset, lastSeq: scan.lastSeq, stop: scan.stop };
    }
    // A record runs past this chunk: carry its start to the next read (growing the chunk if one record is
    // larger than a whole chunk, which MAX_PAYLOAD_BYTES keeps below 1 MiB).
    carried = available - scan.endOffset;
    const next = carried * 2 > chunk.length ? Buffer.allocUnsafe(chunk.length * 2) : chunk;
    chunk.copy(next, 0, scan.endOffset, available);
    chunk = next;
    chunkStart += scan.endOffset;
  }
}

/** Makes a new file's name durable: its directory entry is data of the directory, not of the file. */
/** fsync of a directory: a file created or renamed in it survives a crash. */
export function syncDirectory(path: string): void {
  const fd = openSync(path, constants.O_RDONLY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function grown(buffer: Buffer, usedBytes: number, neededBytes: number): Buffer {
  let size = buffer.length;
  while (size < neededBytes) size *= 2;
  const next = Buffer.allocUnsafe(size);
  buffer.copy(next, 0, 0, usedBytes);
  return next;
}

/** `write` until all of `buffer[0, bytes)` is at `position` (a short write is legal, if rare on files). */
function writeAll(fd: number, buffer: Buffer, bytes: number, position: number, done: (error: Error | null) => void): void {
  write(fd, buffer, 0, bytes, position, (error, written) => {
    if (error) return done(error);
    if (written === bytes) return done(null);
    writeAll(fd, buffer.subarray(written), bytes - written, position + written, done);
  });
}

/** A write refused for want of space is tried again after 50 ms, doubling to 2 s. */
const FIRST_SPACE_RETRY_MS = 50;
const MAX_SPACE_RETRY_MS = 2_000;

export const isOutOfSpace = (error: NodeJS.ErrnoException): boolean => error.code === 'ENOSPC' || error.code === 'EDQUOT';

/**
 * The storage bound's journal (bench/load/no-flush-main.ts sets the variable before the service starts, its
 * shard threads inherit it): writes reach the page cache and are told durable unflushed. NOT DURABLE; it
 * measures what no flush costs. The service never sets it.
 */
const isUnflushed = process.env['PARLAYD_STORAGE_BOUND_UNFLUSHED'] === '1';

/** Every write to a journal file is durable when it returns, unless the storage bound turned flushes off. */
const DURABLE_WRITES = isUnflushed ? 0 : constants.O_DSYNC;

function fdatasyncSync(fd: number): void {
  if (!isUnflushed) fdatasyncSyncNow(fd);
}
