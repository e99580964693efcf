// Requests whose body trickles in, over raw sockets (node:net): what a client that never finishes its body
// does to the server (src/http/unread-bodies.ts). fetch cannot hold a body half sent.
import net from 'node:net';

export interface SlowBody {
  /** Every byte the server sent so far. */
  text(): string;
  /** Resolves when the server (or anything) closes the socket, with the ms since it was opened. */
  closed: Promise<number>;
  isClosed(): boolean;
  /** Stops trickling and closes the socket from this side. */
  destroy(): void;
}

export interface SlowBodyOptions {
  port: number;
  method?: string;
  path: string;
  token?: string;
  /** The Content-Length declared (the body never reaches it). */
  contentLength: number;
  /** Local address to connect from (any 127.x.y.z on Linux): another caller IP for the server. */
  localAddress?: string;
  /** Sends one more byte of the body every this many ms (0: never). */
  trickleMs?: number;
}

/** Connects, sends the headers and the body's first byte `{`, then trickles a space every `trickleMs`. */
export function openSlowBody(options: SlowBodyOptions): Promise<SlowBody> {
  return new Promise((resolve, reject) => {
    const openedAtMs = performance.now();
    const socket = net.connect({
      port: options.port,
      host: '127.0.0.1',
      ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
    });
    let text = '';
    let isClosed = false;
    let timer: NodeJS.Timeout | null = null;
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', () => {}); // a reset by the server is one of the outcomes under test: seen as 'close'
    const closed = new Promise<number>((resolveClosed) =>
      socket.once('close', () => {
        isClosed = true;
        if (timer !== null) clearInterval(timer);
        resolveClosed(performance.now() - openedAtMs);
      }),
    );
    socket.once('connect', () => {
      const auth = options.token === undefined ? '' : `Authorization: Bearer ${options.token}\r\n`;
      socket.write(
        `${options.method ?? 'POST'} ${options.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}` +
          `Content-Type: application/json\r\nContent-Length: ${options.contentLength}\r\n\r\n{`,
      );
      if ((options.trickleMs ?? 0) > 0) timer = setInterval(() => socket.write(' '), options.trickleMs);
      resolve({
        text: () => text,
        closed,
        isClosed: () => isClosed,
        destroy: () => {
          if (timer !== null) clearInterval(timer);
          socket.destroy();
        },
      });
    });
    socket.once('error', reject);
  });
}

/** The status line of the first response in `text`, or '' when none came. */
export function firstStatusLine(text: string): string {
  return /^HTTP\/1\.1 \d{3}[^\r]*/.exec(text)?.[0] ?? '';
}
