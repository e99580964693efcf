// Maker SDK, in the maker's process. The WebSocket the client runs on: the subset of the WHATWG interface it
// uses (so the `ws` package, Node 22's global and a browser's all fit), where the socket lives, and how a
// socket whose server went silent is ended.
import { MAKER_WS_PATH } from '../contract/maker-protocol.js';
import { clientErrors } from './errors.js';

/** The subset of the WHATWG WebSocket the client uses; the `ws` package and Node 22's global both fit. */
export interface SocketLike {
  readonly readyState: number;
  send(data: string): void;
  close(code?: number, reason?: string): void;
  /** Destroys the connection without the close handshake (the `ws` package has it; a browser WebSocket does not). */
  terminate?(): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}
export type SocketConstructor = new (url: string) => SocketLike;

/** WebSocket readyState values. */
export const OPEN = 1;
export const CLOSED = 3;

/**
 * Ends a socket whose peer has gone silent. close() starts the close handshake and keeps the TCP socket until the
 * peer answers it, which a dead link never does (ws gives up after 30 s; undici waits on); terminate() destroys
 * it at once. A browser-style WebSocket has no terminate(), so close() it is.
 */
export function dropDeadSocket(socket: SocketLike): void {
  if (typeof socket.terminate === 'function') socket.terminate();
  else socket.close(4000, 'server silent');
}

/** `ws://h:p`, `http://h:p` or a full `.../v1/mm/ws` URL to the socket URL. */
export function toSocketUrl(url: string): string {
  const parsed = new URL(url);
  if (parsed.protocol === 'http:') parsed.protocol = 'ws:';
  if (parsed.protocol === 'https:') parsed.protocol = 'wss:';
  if (parsed.pathname === '/' || parsed.pathname === '') parsed.pathname = MAKER_WS_PATH;
  return parsed.toString();
}

/** The global WebSocket, else the `ws` package's. */
export async function defaultWebSocket(): Promise<SocketConstructor> {
  const global = (globalThis as { WebSocket?: unknown }).WebSocket;
  if (typeof global === 'function') return global as SocketConstructor;
  try {
    const mod = await import('ws');
    return mod.default as unknown as SocketConstructor;
  } catch {
    throw clientErrors.noWebSocket();
  }
}
