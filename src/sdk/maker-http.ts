// Maker SDK: the maker HTTP routes (docs/maker-protocol.md sections 3.6-3.8), typed from the
// server's own schemas, with the client's current session as bearer. Uses the runtime's fetch.
import type { ProtectionLimitsBody, ProtectionView, StandingQuote, StatsView } from '../contract/mm-desk.js';

export type { ProtectionLimitsBody, ProtectionView, StandingQuote, StatsView };

/** A refused HTTP call: the contract's error body (code, message) and its status. */
export class MakerHttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'MakerHttpError';
  }
}

/** `ws(s)://host:port/...` to `http(s)://host:port`. */
export function httpBaseOf(socketUrl: string): string {
  const url = new URL(socketUrl);
  url.protocol = url.protocol === 'wss:' ? 'https:' : 'http:';
  return url.origin;
}

export async function makerRequest<T>(base: string, token: string, method: 'GET' | 'PUT', path: string, body?: unknown): Promise<T> {
  const response = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const parsed = (await response.json()) as T & { code?: string; message?: string };
  if (!response.ok) throw new MakerHttpError(response.status, parsed.code ?? 'UNKNOWN', parsed.message ?? `HTTP ${response.status}`);
  return parsed;
}
