// Any thread. Request ids are UUIDs whose first byte names the owning shard, so a maker's quote routes to
// its actor without a look-up (issue 5). Takers are sharded by user id, so one actor owns all of a user's RFQs.
//
// After the shard byte comes the creation time (as in a version-7 UUID), then 74 random bits. Time order
// is LMDB order: the RFQs a shard writes in one commit land in the same last leaf pages of `rfqs` and
// `rfqActive` instead of one random page each, so a commit writes, and fsyncs, fewer pages
// (docs/performance.md). The random bits keep ids unguessable; reading one needs its owner's session anyway.
import { hash, randomFillSync } from 'node:crypto';

export const MAX_SHARDS = 256;

export function shardOfUser(userId: string, shardCount: number): number {
  return hash('sha256', userId, 'buffer').readUInt32BE(0) % shardCount;
}

/** Refilled for every id (read at once into the id's text): randomBytes would make an ArrayBuffer per RFQ. */
const randomScratch = Buffer.alloc(10);

/** 40 bits of milliseconds: wraps every ~34 years, which costs only locality, never uniqueness. */
const TIME_MODULUS = 2 ** 40;

export function newRequestId(shard: number, nowMs: number = Date.now()): string {
  const time = (shard.toString(16).padStart(2, '0') + (nowMs % TIME_MODULUS).toString(16).padStart(10, '0')).slice(0, 12);
  const random = randomFillSync(randomScratch);
  random[0] = (random[0]! & 0x0f) | 0x70; // version 7
  random[2] = (random[2]! & 0x3f) | 0x80; // RFC 9562 variant
  const r = random.toString('hex');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-${r.slice(0, 4)}-${r.slice(4, 8)}-${r.slice(8, 20)}`;
}

/** The shard named in a request id, or null when it names none of the running shards. */
export function shardOfRequest(requestId: string, shardCount: number): number | null {
  const shard = Number.parseInt(requestId.slice(0, 2), 16);
  return Number.isInteger(shard) && shard < shardCount ? shard : null;
}
