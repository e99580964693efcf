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

/** Bodies a forwarded request may carry: the largest any route takes (a contest with its image) fits. */
export const MAX_FORWARDED_BODY_BYTES = 1024 * 1024 - 64 * 1024;
