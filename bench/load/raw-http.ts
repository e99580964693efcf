// Load generator, main thread. A minimal HTTP/1.1 keep-alive client on node:net for the maximum-throughput
// scenarios (ceiling, get): pre-encoded request bytes out, status line + Content-Length framing in, one
// request in flight per connection. undici spends ~50 µs of client CPU per request, which made the client,
// not the server, the limit of the ceilings on a 2-core machine (measured: client 100 % CPU, uWS server
// 23 %); this costs a few µs, like wrk. The RFQ ladders use it too: at 2,000 RFQ/s undici's share of the
// client's CPU is CPU taken from the server on the same two cores.
import { connect, type Socket } from 'node:net';

const HEADER_END = Buffer.from('\r\n\r\n');
/** Connections opened at once by RawHttpPool.open. */
const OPEN_BATCH = 128;
const CONTENT_LENGTH_RE = /\r\ncontent-length:\s*(\d+)/i;

export interface RawResponse {
  status: number;
  body: Buffer;
  /** The status line and headers (latin1), for scenarios that check a header (overload: Retry-After). */
  head: string;
}

class RawConnection {
  #buffer: Buffer = Buffer.alloc(0);
  #pending: { resolve(r: RawResponse): void; reject(e: Error): void } | null = null;
  /** Closed by either side (uWS closes keep-alive connections idle for 10 s): never used again. */
  isClosed = false;

  constructor(readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (err) => this.#fail(err));
    // The server's FIN ('end') already means no answer will come; 'close' follows later.
    const onClosed = () => {
      this.isClosed = true;
      this.#fail(new Error('connection closed'));
    };
    socket.on('end', onClosed);
    socket.on('close', onClosed);
  }

  static open(port: number): Promise<RawConnection> {
    const socket = connect({ host: '127.0.0.1', port });
    return new Promise((resolve, reject) => {
      socket.once('connect', () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  request(bytes: Buffer): Promise<RawResponse> {
    if (this.#pending !== null) throw new Error('RawConnection: one request at a time');
    if (this.isClosed) return Promise.reject(new Error('connection closed'));
    return new Promise((resolve, reject) => {
      this.#pending = { resolve, reject };
      this.socket.write(bytes);
    });
  }

  #onData(chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    const headerEnd = this.#buffer.indexOf(HEADER_END);
    if (headerEnd < 0) return;
    const head = this.#buffer.toString('latin1', 0, headerEnd);
    const length = Number(CONTENT_LENGTH_RE.exec(head)?.[1] ?? NaN);
    if (!Number.isSafeInteger(length)) return this.#fail(new Error(`response without Content-Length: ${head.slice(0, 200)}`));
    const end = headerEnd + HEADER_END.length + length;
    if (this.#buffer.length < end) return;
    const response = { status: Number(head.slice(9, 12)), body: this.#buffer.subarray(headerEnd + HEADER_END.length, end), head };
    this.#buffer = this.#buffer.length === end ? Buffer.alloc(0) : this.#buffer.subarray(end);
    const pending = this.#pending;
    this.#pending = null;
    pending?.resolve(response);
  }

  #fail(err: Error): void {
    const pending = this.#pending;
    this.#pending = null;
    pending?.reject(err);
  }
}

interface Queued {
  bytes: Buffer;
  resolve(r: RawResponse): void;
  reject(e: Error): void;
}

export class RawHttpPool {
  /** Idle connections, used first in first out so that none sits idle long enough to be closed. */
  readonly #idle: RawConnection[] = [];
  /** Open connections and connections being opened, at most `size`. */
  #live = 0;
  /** Requests waiting for a connection (open loop: more may be in flight than there are connections). */
  readonly #queued: Queued[] = [];
  readonly #all = new Set<RawConnection>();

  private constructor(
    private readonly port: number,
    private readonly size: number,
  ) {}

  static async open(port: number, connections: number): Promise<RawHttpPool> {
    const pool = new RawHttpPool(port, connections);
    // In rounds of OPEN_BATCH connects at once: thousands one after another (overload) took seconds, and
    // all at once would overflow the listen backlog (somaxconn).
    for (let opened = 0; opened < connections;) {
      const round = Math.min(OPEN_BATCH, connections - opened);
      const conns = await Promise.all(Array.from({ length: round }, () => pool.#connect()));
      for (const conn of conns) pool.#release(conn);
      opened += round;
    }
    return pool;
  }

  /** Requests waiting here for a free connection now: a queue in the client, not in the server. */
  get queuedCount(): number {
    return this.#queued.length;
  }

  /** Sends on an idle connection, on a new one if a closed one left room, or queues until one is free. */
  request(bytes: Buffer): Promise<RawResponse> {
    let conn = this.#idle.shift();
    while (conn !== undefined && conn.isClosed) {
      this.#forget(conn);
      conn = this.#idle.shift();
    }
    if (conn !== undefined) return this.#send(conn, bytes);
    const queued = new Promise<RawResponse>((resolve, reject) => this.#queued.push({ bytes, resolve, reject }));
    if (this.#live < this.size)
      this.#connect().then(
        (c) => this.#release(c),
        (err: Error) => this.#queued.shift()?.reject(err),
      );
    return queued;
  }

  async #connect(): Promise<RawConnection> {
    this.#live++;
    try {
      const conn = await RawConnection.open(this.port);
      this.#all.add(conn);
      return conn;
    } catch (err) {
      this.#live--;
      throw err;
    }
  }

  async #send(conn: RawConnection, bytes: Buffer): Promise<RawResponse> {
    try {
      return await conn.request(bytes);
    } finally {
      this.#release(conn);
    }
  }

  /** A connection is free again: the next queued request takes it, or it waits in the idle list. */
  #release(conn: RawConnection): void {
    if (conn.isClosed) {
      this.#forget(conn);
      if (this.#queued.length > 0)
        this.#connect().then(
          (c) => this.#release(c),
          (err: Error) => this.#queued.shift()?.reject(err),
        );
      return;
    }
    const next = this.#queued.shift();
    if (next === undefined) this.#idle.push(conn);
    else this.#send(conn, next.bytes).then(next.resolve, next.reject);
  }

  #forget(conn: RawConnection): void {
    if (this.#all.delete(conn)) this.#live--;
  }

  close(): void {
    for (const conn of this.#all) conn.socket.destroy();
    for (const waiting of this.#queued.splice(0)) waiting.reject(new Error('RawHttpPool closed'));
  }
}

/** A request with the given headers (and body, sent with its Content-Length), as bytes ready to write. */
export function encodeRequest(port: number, method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: string): Buffer {
  const lines = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  if (body === undefined) return Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
  const bodyBytes = Buffer.from(body, 'utf8');
  lines.push(`Content-Length: ${bodyBytes.length}`);
  return Buffer.concat([Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1'), bodyBytes]);
}

/** `GET path` with the given headers, as bytes ready to write. */
export function encodeGet(port: number, path: string, headers: Record<string, string>): Buffer {
  return encodeRequest(port, 'GET', path, headers);
}
