// Load generator, main thread. A minimal HTTP/1.1 keep-alive client on node:net for the maximum-throughput
// scenarios (ceiling, get): pre-encoded request bytes out, status line + Content-Length framing in, one
// request in flight per connection. undici spends ~50 µs of client CPU per request, which made the client,
// not the server, the limit of the ceilings on a 2-core machine (measured: client 100 % CPU, uWS server
// 23 %); this costs a few µs, like wrk. RFQ scenarios keep undici: there the server is the limit.
import { connect, type Socket } from 'node:net';

const HEADER_END = Buffer.from('\r\n\r\n');
const CONTENT_LENGTH_RE = /\r\ncontent-length:\s*(\d+)/i;

export interface RawResponse {
  status: number;
  body: Buffer;
}

class RawConnection {
  #buffer: Buffer = Buffer.alloc(0);
  #pending: { resolve(r: RawResponse): void; reject(e: Error): void } | null = null;

  constructor(readonly socket: Socket) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('error', (err) => this.#fail(err));
    socket.on('close', () => this.#fail(new Error('connection closed')));
  }

  request(bytes: Buffer): Promise<RawResponse> {
    if (this.#pending !== null) throw new Error('RawConnection: one request at a time');
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
    const response = { status: Number(head.slice(9, 12)), body: this.#buffer.subarray(headerEnd + HEADER_END.length, end) };
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

export class RawHttpPool {
  readonly #idle: RawConnection[] = [];
  readonly #all: RawConnection[] = [];

  private constructor() {}

  static async open(port: number, connections: number): Promise<RawHttpPool> {
    const pool = new RawHttpPool();
    for (let i = 0; i < connections; i++) {
      const socket = connect({ host: '127.0.0.1', port });
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
      const conn = new RawConnection(socket);
      pool.#all.push(conn);
      pool.#idle.push(conn);
    }
    return pool;
  }

  /** Sends on an idle connection; callers never exceed the pool's size (closed loop, one per caller). */
  async request(bytes: Buffer): Promise<RawResponse> {
    const conn = this.#idle.pop();
    if (conn === undefined) throw new Error('RawHttpPool: more callers than connections');
    try {
      return await conn.request(bytes);
    } finally {
      this.#idle.push(conn);
    }
  }

  close(): void {
    for (const conn of this.#all) conn.socket.destroy();
  }
}

/** `GET path` with the given headers, as bytes ready to write. */
export function encodeGet(port: number, path: string, headers: Record<string, string>): Buffer {
  const lines = [`GET ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)];
  return Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'latin1');
}
