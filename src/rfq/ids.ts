// Any thread. Request ids are UUIDs whose first byte names the owning shard, so a maker's quote routes to
// its actor without a look-up (issue 5). Takers are sharded by user id, so one actor owns all of a user's RFQs.
import { createHash, randomUUID } from 'node:crypto';

export const MAX_SHARDS = 256;

export function shardOfUser(userId: string, shardCount: number): number {
  return createHash('sha256').update(userId).digest().readUInt32BE(0) % shardCount;
}

export function newRequestId(shard: number): string {
  return shard.toString(16).padStart(2, '0') + randomUUID().slice(2);
}

/** The shard named in a request id, or null when it names none of the running shards. */
export function shardOfRequest(requestId: string, shardCount: number): number | null {
  const shard = Number.parseInt(requestId.slice(0, 2), 16);
  return Number.isInteger(shard) && shard < shardCount ? shard : null;
}
