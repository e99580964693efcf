// Any process. What a gateway sends an RFQ shard on a shard node (subjects.ownerRfq), in order on one
// subject: the shard pool's batches as they are in one process (rfq/messages.ts MainToShard), the markets
// the shard reads, and two requests of the gateway's own: `hello` (the shard answers once it takes work,
// with the RFQs it ended at its start) and `beat` (answered at once: the gateway's liveness check of the
// node, and the node's of the gateway). The shard's events come back per gateway (subjects.gatewayEvents).
import type { StoredMarket } from '../contract/markets.js';
import type { MainToShard } from '../rfq/messages.js';

/**
 * `makers` (hello and beat; `makers` itself, asked before a new maker is told it is authenticated): whether the
 * gateway has a maker connected. The door sends the `rfq` broadcast to, and awaits the audience of, only the
 * gateways that have one; a gateway that never said is taken to have one.
 */
export type ToShardNode =
  | { k: 'hello'; gateway: string; makers?: boolean }
  | { k: 'beat'; gateway: string; makers?: boolean }
  | { k: 'makers'; gateway: string; makers: true }
  | { k: 'batch'; gateway: string; batch: MainToShard[] }
  | { k: 'markets'; gateway: string; markets: StoredMarket[] };

/**
 * The answer to `hello` and to `beat`. `incarnation`: drawn at each start of the shard, so a gateway that hears
 * a new one knows the shard restarted (what it had not answered is lost, markets written meanwhile missed).
 * `failedRfqs` (hello): RFQs active at the shard's last stop, ended at its start (ShardToMain `ready`).
 */
export interface DoorReply {
  incarnation: string;
  failedRfqs: number;
}

/** A view's request (subjects.ownerView): http/owned-views.ts OWNED_VIEWS by name, with its arguments. */
export interface OwnedViewRequest {
  name: string;
  args: unknown;
}

/** Its answer: the view's result, or that it could not be read (not a view, or arguments it cannot take). */
export type OwnedViewReply = { ok: true; value: unknown } | { ok: false };
