// Load generator, maker worker threads (maker-worker.ts). A minimal RFC 6455 WebSocket client connection on
// node:net: the HTTP/1.1 Upgrade, then unmasked server frames parsed straight from the socket's chunks and
// masked text frames out. It exists because the `ws` client spends too much CPU per received frame on a
// 2-core machine shared with the server being measured: with 1,000 makers the fan-out figure measured the
// client's frame handling. Here a chunk of whole frames costs a header read and a subarray per frame; bytes
// are copied only when a frame is split across chunks. No extensions (no permessage-deflate), no
// subprotocols, no UTF-8 validation: messages are handed over as Buffers and the caller decides.
import { createHash, randomBytes, randomFillSync } from 'node:crypto';
import { connect, type Socket } from 'node:net';

// RFC 6455 1.3 (its example: key dGhlIHNhbXBsZSBub25jZQ== -> accept s3pPLMBiTxaQ9kYGzzhZRbK+xOo=).
const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const HEADER_END = Buffer.from('\r\n\r\n');
const ACCEPT_RE = /\r\nsec-websocket-accept:[ \t]*(\S+)/i;

const OP_CONTINUATION = 0x0;
const OP_TEXT = 0x1;
const OP_BINARY = 0x2;
const OP_CLOSE = 0x8;
const OP_PING = 0x9;
const OP_PONG = 0xa;

/** Largest message accepted (a frame or a reassembled message); the service sends a few hundred bytes. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** How long close() waits for the server's close frame and the end of the socket before destroying it. */
const CLOSE_TIMEOUT_MS = 2000;

// Client frames must be masked with an unpredictable key (RFC 6455 5.3): 4 bytes a frame, taken from a pool
// filled by the CSPRNG, so a frame costs no call into OpenSSL (as `ws` does).
const maskPool = Buffer.allocUnsafe(8192);
let maskAt = maskPool.length;

function nextMask(): number {
  if (maskAt === maskPool.length) {
    randomFillSync(maskPool);
    maskAt = 0;
  }
  const mask = maskPool.readUInt32BE(maskAt);
  maskAt += 4;
  return mask;
}

/** Bytes of a client frame header (with its 4-byte mask) for a payload of `length` bytes. */
function headerBytes(length: number): number {
  return length < 126 ? 6 : length < 65536 ? 8 : 14;
}

/**
 * Writes one masked frame (FIN set) at `at` in `out`, whose payload is already in place after the header
 * slot, and masks that payload; returns the offset after the frame.
 */
function finishFrame(out: Buffer, at: number, opcode: number, length: number): number {
  out[at] = 0x80 | opcode;
  let p = at + 2;
  if (length < 126) out[at + 1] = 0x80 | length;
  else if (length < 65536) {
    out[at + 1] = 0x80 | 126;
    out.writeUInt16BE(length, p);
    p += 2;
  } else {
    out[at + 1] = 0x80 | 127;
    out.writeUInt32BE(Math.floor(length / 2 ** 32), p);
    out.writeUInt32BE(length >>> 0, p + 4);
    p += 8;
  }
  const mask = nextMask();
  out.writeUInt32BE(mask, p);
  p += 4;
  const m0 = mask >>> 24;
  const m1 = (mask >>> 16) & 0xff;
  const m2 = (mask >>> 8) & 0xff;
  const m3 = mask & 0xff;
  const end = p + length;
  let i = p;
  for (; i + 3 < end; i += 4) {
    out[i] = out[i]! ^ m0;
    out[i + 1] = out[i + 1]! ^ m1;
    out[i + 2] = out[i + 2]! ^ m2;
    out[i + 3] = out[i + 3]! ^ m3;
  }
  for (let k = 0; i < end; i++, k++) out[i] = out[i]! ^ (k === 0 ? m0 : k === 1 ? m1 : m2);
  return end;
}

function encodeFrame(opcode: number, payload: Buffer): Buffer {
  const header = headerBytes(payload.length);
  const out = Buffer.allocUnsafe(header + payload.length);
  payload.copy(out, header);
  finishFrame(out, 0, opcode, payload.length);
  return out;
}

type State = 'connecting' | 'open' | 'closing' | 'closed';

/**
 * One client connection, with the browser WebSocket's shape: `new RawWebSocket(port, path)` starts connecting
 * and the callbacks, assigned right after (before any I/O can fire), report open, message, close and error.
 * They are plain properties, not EventEmitter events, so a message costs one call.
 */
export class RawWebSocket {
  /** The server's 101 with the right Sec-WebSocket-Accept has arrived; frames may be sent. */
  onOpen: () => void = () => undefined;
  /** A whole message (text or binary, fragments reassembled). Never reused by this class: it may be kept. */
  onMessage: (data: Buffer) => void = () => undefined;
  /** The socket is gone (once, in every case); `code` is the server's close code, 1006 if none came. */
  onClose: (code: number) => void = () => undefined;
  /** A socket error, a refused upgrade or a protocol error; onClose follows. */
  onError: (err: Error) => void = () => undefined;

  readonly #socket: Socket;
  readonly #key = randomBytes(16).toString('base64');
  #state: State = 'connecting';
  #head: Buffer | null = null;
  #closeCode = 1006;
  #isCloseSent = false;
  // Bytes of a frame split across chunks: the chunks so far, their total, and the total the frame needs
  // (0 while its header is incomplete).
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  #neededBytes = 0;
  // A fragmented message being reassembled.
  #fragments: Buffer[] = [];
  #fragmentBytes = 0;
  readonly #closed: Promise<void>;

  /** Connects to `ws://host:port` + `path` and sends the Upgrade request. */
  constructor(port: number, path: string, host = '127.0.0.1') {
    const socket = connect({ host, port });
    this.#socket = socket;
    socket.setNoDelay(true);
    this.#closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.once('connect', () => {
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${host}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${this.#key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
        'latin1',
      );
    });
    socket.on('data', (chunk: Buffer) => (this.#state === 'connecting' ? this.#onHandshakeData(chunk) : this.#onData(chunk)));
    socket.on('error', (err) => this.onError(err));
    socket.once('close', () => {
      this.#state = 'closed';
      this.onClose(this.#closeCode);
    });
  }

  /** The response head, until its blank line: a 101 with sha1(key + GUID) as Sec-WebSocket-Accept, or fail. */
  #onHandshakeData(chunk: Buffer): void {
    const head = this.#head === null ? chunk : Buffer.concat([this.#head, chunk]);
    this.#head = head;
    const end = head.indexOf(HEADER_END);
    if (end < 0) {
      if (head.length > 16384) this.#failUpgrade('response head too large');
      return;
    }
    this.#head = null;
    const text = head.toString('latin1', 0, end);
    if (!/^HTTP\/1\.1 101 /.test(text)) {
      // The refusal's Retry-After rides in the message: a caller paced by it (maker-worker.ts) reads it there.
      const retryAfter = /^retry-after:\s*(\d+)/im.exec(text)?.[1];
      return this.#failUpgrade(`refused: ${text.split('\r\n')[0]}${retryAfter === undefined ? '' : ` (Retry-After ${retryAfter})`}`);
    }
    const expected = createHash('sha1')
      .update(this.#key + GUID)
      .digest('base64');
    if (ACCEPT_RE.exec(text)?.[1] !== expected) return this.#failUpgrade('wrong Sec-WebSocket-Accept');
    this.#state = 'open';
    this.onOpen();
    // Frames that came in the same chunk as the 101 (the server may speak first).
    if (head.length > end + HEADER_END.length) this.#onData(head.subarray(end + HEADER_END.length));
  }

  #failUpgrade(message: string): void {
    this.#state = 'closed';
    this.#socket.destroy();
    this.onError(new Error(`websocket upgrade: ${message}`));
  }

  get isOpen(): boolean {
    return this.#state === 'open';
  }

  /** One masked text frame, one write. Dropped if the connection is no longer open. */
  send(text: string): void {
    if (this.#state !== 'open') return;
    const length = Buffer.byteLength(text);
    const header = headerBytes(length);
    const out = Buffer.allocUnsafe(header + length);
    out.write(text, header, 'utf8');
    finishFrame(out, 0, OP_TEXT, length);
    this.#socket.write(out);
  }

  /** Several text frames in one buffer and one write (a batch of answers). */
  sendMany(texts: readonly string[]): void {
    if (this.#state !== 'open' || texts.length === 0) return;
    if (texts.length === 1) return this.send(texts[0]!);
    const lengths = texts.map((t) => Buffer.byteLength(t));
    let total = 0;
    for (const length of lengths) total += headerBytes(length) + length;
    const out = Buffer.allocUnsafe(total);
    let at = 0;
    for (let i = 0; i < texts.length; i++) {
      const length = lengths[i]!;
      out.write(texts[i]!, at + headerBytes(length), 'utf8');
      at = finishFrame(out, at, OP_TEXT, length);
    }
    this.#socket.write(out);
  }

  /** Starts the closing handshake and resolves once the socket has closed (or was destroyed after a timeout). */
  close(code = 1000, reason = ''): Promise<void> {
    if (this.#state === 'connecting') this.#socket.destroy();
    else if (this.#state === 'open') {
      this.#state = 'closing';
      this.#sendClose(code, reason);
      const timer = setTimeout(() => this.#socket.destroy(), CLOSE_TIMEOUT_MS);
      timer.unref();
      void this.#closed.then(() => clearTimeout(timer));
    }
    return this.#closed;
  }

  #sendClose(code: number, reason: string): void {
    if (this.#isCloseSent || this.#socket.destroyed) return;
    this.#isCloseSent = true;
    const payload = Buffer.allocUnsafe(2 + Buffer.byteLength(reason));
    payload.writeUInt16BE(code, 0);
    payload.write(reason, 2, 'utf8');
    this.#socket.write(encodeFrame(OP_CLOSE, payload));
  }

  /** A protocol error from the server: close with 1002 and drop the socket. */
  #failProtocol(message: string): void {
    this.#sendClose(1002, '');
    this.#state = 'closed';
    this.#socket.destroy();
    this.onError(new Error(`websocket protocol error: ${message}`));
  }

  #onData(chunk: Buffer): void {
    let buf = chunk;
    if (this.#pendingBytes > 0) {
      // A frame was split: collect until it is whole (no concat per chunk for a large frame).
      this.#pending.push(chunk);
      this.#pendingBytes += chunk.length;
      if (this.#pendingBytes < this.#neededBytes) return;
      buf = Buffer.concat(this.#pending, this.#pendingBytes);
      this.#pending = [];
      this.#pendingBytes = 0;
      this.#neededBytes = 0;
    }
    const end = buf.length;
    let at = 0;
    while (this.#state === 'open' || this.#state === 'closing') {
      const available = end - at;
      if (available < 2) break;
      const b0 = buf[at]!;
      const b1 = buf[at + 1]!;
      if ((b1 & 0x80) !== 0) return this.#failProtocol('masked server frame');
      let length = b1 & 0x7f;
      let header = 2;
      if (length === 126) {
        if (available < 4) break;
        length = buf.readUInt16BE(at + 2);
        header = 4;
      } else if (length === 127) {
        if (available < 10) break;
        const high = buf.readUInt32BE(at + 2);
        length = high * 2 ** 32 + buf.readUInt32BE(at + 6);
        header = 10;
      }
      if (length > MAX_MESSAGE_BYTES) return this.#failProtocol(`frame of ${length} bytes`);
      if (available < header + length) {
        this.#neededBytes = header + length;
        break;
      }
      const start = at + header;
      at = start + length;
      this.#onFrame(b0, buf.subarray(start, at));
    }
    // Common path: the chunk held whole frames and nothing is kept. Otherwise keep the split frame's bytes.
    if (at < end && this.#state !== 'closed') {
      this.#pending.push(at === 0 ? buf : buf.subarray(at));
      this.#pendingBytes = end - at;
    }
  }

  #onFrame(b0: number, payload: Buffer): void {
    const isFin = (b0 & 0x80) !== 0;
    const opcode = b0 & 0x0f;
    if ((b0 & 0x70) !== 0) return this.#failProtocol('RSV bits set without an extension');
    if (opcode === OP_TEXT || opcode === OP_BINARY) {
      if (this.#fragments.length > 0) return this.#failProtocol('new message inside a fragmented one');
      if (isFin) return this.onMessage(payload);
      this.#fragments.push(payload);
      this.#fragmentBytes = payload.length;
      return;
    }
    if (opcode === OP_CONTINUATION) {
      if (this.#fragments.length === 0) return this.#failProtocol('continuation without a message');
      this.#fragments.push(payload);
      this.#fragmentBytes += payload.length;
      if (this.#fragmentBytes > MAX_MESSAGE_BYTES) return this.#failProtocol(`message of ${this.#fragmentBytes} bytes`);
      if (!isFin) return;
      const message = Buffer.concat(this.#fragments, this.#fragmentBytes);
      this.#fragments = [];
      this.#fragmentBytes = 0;
      return this.onMessage(message);
    }
    // Control frames: never fragmented, at most 125 bytes (RFC 6455 5.5).
    if (!isFin || payload.length > 125) return this.#failProtocol('bad control frame');
    if (opcode === OP_PING) {
      if (this.#state === 'open') this.#socket.write(encodeFrame(OP_PONG, payload));
      return;
    }
    if (opcode === OP_PONG) return;
    if (opcode === OP_CLOSE) {
      // Echo the status code (none if the server sent none), then end our side; 'close' follows.
      this.#closeCode = payload.length >= 2 ? payload.readUInt16BE(0) : 1005;
      if (!this.#isCloseSent) {
        this.#isCloseSent = true;
        this.#socket.write(encodeFrame(OP_CLOSE, payload.length >= 2 ? payload.subarray(0, 2) : Buffer.alloc(0)));
      }
      this.#socket.end();
      this.#state = 'closed';
      return;
    }
    this.#failProtocol(`unknown opcode ${opcode}`);
  }
}
