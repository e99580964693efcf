// Main thread. A request this process does not serve itself, as a cluster's gateway hands it to the
// coordinator (cluster/coordinator-link.ts), and the coordinator's answer (docs/scaling.md).
export interface ForwardedRequest {
  method: string;
  /** Path and query, as received. */
  url: string;
  headers: [string, string][];
  body: Uint8Array | null;
  /** The caller's address as the gateway saw it: its rate limits and login limits are the caller's, not the gateway's. */
  client: string;
}

export interface ForwardedReply {
  status: number;
  headers: [string, string][];
  body: Uint8Array;
}

export type Forwarder = (request: ForwardedRequest) => Promise<ForwardedReply>;

/** Headers of a forwarded request the coordinator's door sets (cluster/coordinator-door.ts), read by server.ts. */
export const FORWARDED_KEY_HEADER = 'x-parlayd-door-key';
export const FORWARDED_CLIENT_HEADER = 'x-parlayd-client';

/**
 * Never copied from a caller's request to the coordinator, nor from its answer back: hop-by-hop headers,
 * those fetch() sets itself or refuses, and those uWS writes itself. The gateway leaves them out both ways.
 */
export const UNFORWARDED_HEADERS: ReadonlySet<string> = new Set([
  'connection',
  'content-length',
  'date',
  'expect',
  'host',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'uwebsockets',
]);

/** Bodies a forwarded request may carry: the largest any route takes (a contest with its image) fits. */
export const MAX_FORWARDED_BODY_BYTES = 1024 * 1024 - 64 * 1024;
