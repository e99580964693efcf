// Any process. The ledger check across a cluster's owner nodes. Each node checks its own LMDB read model
// (ledger/check.ts checkTransfers: every bucket against its transfers, none negative, its money conserved)
// once LMDB holds everything its owner decided, and its book's held buckets against their holds
// (engine/check.ts bookHoldDifferences), in its check's differences. A transfer between two owners is written in halves, each in its owner's
// LMDB, and each node counts exactly the halves it holds: its own check is conserved at every moment, the
// debit half it holds alone counting as in transit (+), a credit half alone as arrived before its debit was
// seen (−, when this node was asked after the other). So the sum over the nodes is conserved however their
// looks interleave, and its in-transit is what is still on a channel once the looks are taken after it lands.
import type { NatsConnection } from 'nats';
import type { LedgerCheck } from '../ledger/check.js';
import { errors } from '../lib/errors.js';
import { decode, encode, subjects } from './wire.js';

/** One owner node's part: its read model's check, with its book's hold differences. */
export interface OwnerCheck {
  owner: number;
  check: LedgerCheck;
}

export interface ClusterCheck {
  ok: boolean;
  owners: OwnerCheck[];
  /** Owners that did not answer within the deadline: the check is not ok while any is missing. */
  unavailable: number[];
  totalMicros: bigint;
  creditedMicros: bigint;
  withdrawnMicros: bigint;
  inTransitMicros: bigint;
}

export async function checkCluster(nc: NatsConnection, owners: readonly number[], timeoutMs: number): Promise<ClusterCheck> {
  const answers = await Promise.all(
    owners.map(async (owner) => {
      try {
        return decode<OwnerCheck>((await nc.request(subjects.ownerCheck(owner), encode(null), { timeout: timeoutMs })).data);
      } catch {
        return owner; // no responders, or none in time
      }
    }),
  );
  const parts = answers.filter((answer): answer is OwnerCheck => typeof answer !== 'number');
  const sum = (field: 'total_micros' | 'credited_micros' | 'withdrawn_micros' | 'in_transit_micros') =>
    parts.reduce((total, { check }) => total + BigInt(check[field]), 0n);
  const result = {
    owners: parts,
    unavailable: answers.filter((answer): answer is number => typeof answer === 'number'),
    totalMicros: sum('total_micros'),
    creditedMicros: sum('credited_micros'),
    withdrawnMicros: sum('withdrawn_micros'),
    inTransitMicros: sum('in_transit_micros'),
  };
  const isConserved = result.totalMicros + result.inTransitMicros === result.creditedMicros - result.withdrawnMicros;
  const isEveryOk = parts.every(({ check }) => check.ok);
  return { ok: result.unavailable.length === 0 && isEveryOk && isConserved, ...result };
}

/**
 * The cluster's check as GET /v1/admin/ledger/check answers it: every owner's counts and differences
 * together. An owner that did not answer is a 503 (its part cannot be guessed).
 */
export function ledgerCheckOfCluster(cluster: ClusterCheck): LedgerCheck {
  if (cluster.unavailable.length > 0) throw errors.shardUnreachable();
  const sum = (field: 'at_risk_micros' | 'locked_micros') => cluster.owners.reduce((total, { check }) => total + BigInt(check[field]), 0n);
  const count = (field: 'accounts' | 'transfers') => cluster.owners.reduce((total, { check }) => total + check[field], 0);
  return {
    ok: cluster.ok,
    accounts: count('accounts'),
    transfers: count('transfers'),
    total_micros: cluster.totalMicros.toString(),
    credited_micros: cluster.creditedMicros.toString(),
    withdrawn_micros: cluster.withdrawnMicros.toString(),
    in_transit_micros: cluster.inTransitMicros.toString(),
    at_risk_micros: sum('at_risk_micros').toString(),
    locked_micros: sum('locked_micros').toString(),
    differences: cluster.owners.flatMap(({ check }) => check.differences),
  };
}
