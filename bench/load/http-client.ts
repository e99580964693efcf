// Load generator, main thread. The HTTP side of the client: one undici Pool per target with keep-alive
// connections and no pipelining (a request waits for its own connection, as a browser or SDK would).
import { Pool } from 'undici';

export const DEFAULT_CONNECTIONS = 64;

export interface HttpTarget {
  pool: Pool;
  close(): Promise<void>;
}

export function httpTarget(baseUrl: string, connections = DEFAULT_CONNECTIONS): HttpTarget {
  const pool = new Pool(baseUrl, {
    connections,
    pipelining: 1,
    keepAliveTimeout: 60_000,
    keepAliveMaxTimeout: 60_000,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  return { pool, close: () => pool.close() };
}

export interface Sent {
  status: number;
  text: string;
}

export async function send(
  pool: Pool,
  method: 'GET' | 'POST',
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Sent> {
  const res = await pool.request({ method, path, headers, ...(body === undefined ? {} : { body }) });
  return { status: res.statusCode, text: await res.body.text() };
}
