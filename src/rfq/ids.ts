// Any thread. Request ids are UUIDs whose first byte names the owning shard, so a maker's quote routes to
// its actor without a look-up. Takers are sharded by user id, so one actor owns all of a user's RFQs.
//
// After the shard byte comes the creation time (as in a version-7 UUID), then 74 random bits. Time order
// is LMDB order: the RFQs a shard writes in one commit land in the same last leaf pages of `rfqs` and
// `rfqActive` instead of one random page each, so a commit writes, and fsyncs, fewer pages
// (docs/performance.md). The random bits keep ids unguessable; reading one needs its owner's session anyway.
import { randomFillSync } from 'node:crypto';
import { hashMod } from '../engine/routing.js';

export const MAX_SHARDS = 256;

/**
 * FNV-1a over the id's UTF-16 code units (engine/routing.ts): spreads user ids evenly and costs no native call
 * (it runs for every RFQ). The engine's owners place a user's balance by the same function, so the shard that
 * takes a user's RFQs owns the money they reserve.
 */
export function shardOfUser(userId: string, shardCount: number): number {
  return hashMod(userId, shardCount);
}

/**
 * Random bytes for ids, drawn from the OS generator a pool at a time (as crypto.randomUUID does): a native
 * call per id was 2 % of the main thread's samples at 2,000 RFQ/s, and randomBytes an ArrayBuffer per id.
 */
const RANDOM_POOL_BYTES = 4096;
const ID_RANDOM_BYTES = 10;
const randomPool = Buffer.alloc(RANDOM_POOL_BYTES);
let randomOffset = RANDOM_POOL_BYTES;

/** The next `ID_RANDOM_BYTES` unused random bytes; each byte is handed out once. */
function takeRandom(): Buffer {
  if (randomOffset + ID_RANDOM_BYTES > RANDOM_POOL_BYTES) {
    randomFillSync(randomPool);
    randomOffset = 0;
  }
  const bytes = randomPool.subarray(randomOffset, randomOffset + ID_RANDOM_BYTES);
  randomOffset += ID_RANDOM_BYTES;
  return bytes;
}

/** 40 bits of milliseconds: wraps every ~34 years, which costs only locality, never uniqueness. */
const TIME_MODULUS = 2 ** 40;

export function newRequestId(shard: number, nowMs: number = Date.now()): string {
  const time = (shard.toString(16).padStart(2, '0') + (nowMs % TIME_MODULUS).toString(16).padStart(10, '0')).slice(0, 12);
  const random = takeRandom();
  random[0] = (random[0]! & 0x0f) | 0x70; // version 7
  random[2] = (random[2]! & 0x3f) | 0x80; // RFC 9562 variant
  const r = random.toString('hex');
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-${r.slice(0, 4)}-${r.slice(4, 8)}-${r.slice(8, 20)}`;
}

/** The number in a request id's first byte (the shard, or a cluster's owner, that created it), or null. */
export function ownerByteOf(requestId: string): number | null {
  const owner = Number.parseInt(requestId.slice(0, 2), 16);
  return Number.isInteger(owner) ? owner : null;
}

/** The shard named in a request id, or null when it names none of the running shards. */
export function shardOfRequest(requestId: string, shardCount: number): number | null {
  const shard = ownerByteOf(requestId);
  return shard !== null && shard < shardCount ? shard : null;
}
