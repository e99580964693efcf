// Any process; pure. A cluster's balances live in 256 partitions, each owned by one owner actor on one shard
// node. A name's partition is frozen: the protocol's is 0, a user's (and every account of that user) the
// FNV-1a of the user id, any other name (a maker's account, a credit key's reference) the FNV-1a of the name,
// all modulo 256, as routing.ts places them among the owners of one process. For a power-of-two owner count
// the two agree (h mod 256 mod n = h mod n), so a process of 1, 2 or 4 shards places every name where the
// partitions it would own place it.
//
// An owner is named by the first partition it owns: stable for as long as its partitions are, with no second
// numbering to keep (the owners' channels and journals are keyed by it). The map from partition to owner is
// the cluster's: every process that routes money must hold the same one (the coordinator's), since a
// balance lives where the map says.
import { PROTOCOL, userIdOf, type AccountId } from '../records/ledger.js';
import { hashMod } from '../engine/routing.js';

export const PARTITIONS = 256;

export function partitionOfName(name: AccountId): number {
  return name === PROTOCOL ? 0 : hashMod(userIdOf(name) ?? name, PARTITIONS);
}

/** The partition of a user's accounts, RFQs and entries. */
export function partitionOfUser(userId: string): number {
  return hashMod(userId, PARTITIONS);
}

/**
 * Partitions written as ranges and single numbers, comma-separated (`0-127`, `0-63,200`), in order and
 * without repeats. Throws with one line naming what is wrong.
 */
export function parsePartitions(text: string): number[] {
  const partitions: number[] = [];
  for (const part of text.split(',')) {
    const match = /^\s*(\d{1,3})(?:\s*-\s*(\d{1,3}))?\s*$/.exec(part);
    if (match === null) throw new Error(`partitions "${text}": "${part}" is not a number or a range like 0-127`);
    const first = Number(match[1]);
    const last = match[2] === undefined ? first : Number(match[2]);
    if (last < first || last >= PARTITIONS) throw new Error(`partitions "${text}": "${part.trim()}" is not within 0-${PARTITIONS - 1}`);
    for (let p = first; p <= last; p++) {
      if (partitions.includes(p)) throw new Error(`partitions "${text}": ${p} is named twice`);
      partitions.push(p);
    }
  }
  return partitions.sort((a, b) => a - b);
}

/** Which owner holds each partition: every partition exactly one owner's. */
export class PartitionMap {
  readonly #ownerOfPartition: number[];
  /** The owners, each named by its first partition, in order. */
  readonly owners: readonly number[];

  private constructor(ownerOfPartition: number[]) {
    this.#ownerOfPartition = ownerOfPartition;
    this.owners = [...new Set(ownerOfPartition)].sort((a, b) => a - b);
  }

  /** The map of owners each given by its partitions (`parsePartitions` of each), e.g. `['0-127', '128-255']`. */
  static of(ownersPartitions: readonly string[]): PartitionMap {
    const ownerOfPartition = new Array<number>(PARTITIONS).fill(-1);
    for (const text of ownersPartitions) {
      const partitions = parsePartitions(text);
      for (const p of partitions) {
        if (ownerOfPartition[p] !== -1) throw new Error(`partition map: ${p} is given to two owners`);
        ownerOfPartition[p] = partitions[0]!;
      }
    }
    const missing = ownerOfPartition.indexOf(-1);
    if (missing !== -1) throw new Error(`partition map: partition ${missing} has no owner`);
    return new PartitionMap(ownerOfPartition);
  }

  ownerOfPartition(partition: number): number {
    return this.#ownerOfPartition[partition]!;
  }

  /** The owner of an account or a credit key's reference: what Book.ownerOf asks. */
  readonly ownerOf = (name: AccountId): number => this.#ownerOfPartition[partitionOfName(name)]!;

  /** The partitions of owner `owner`. */
  partitionsOf(owner: number): number[] {
    const partitions: number[] = [];
    for (let p = 0; p < PARTITIONS; p++) if (this.#ownerOfPartition[p] === owner) partitions.push(p);
    return partitions;
  }
}
