// Any process. What crosses NATS between the cluster's processes: msgpack (msgpackr), with amounts as
// BigInts kept BigInts (int64 on the wire, the extension past it) and everything else as msgpack's own
// types, and the subjects it travels on. Subjects are per partition where a caller knows the partition and
// not who owns it (a money call: whichever node holds the partition answers), per owner between owners
// (their channels are kept per owner).
import { Packr } from 'msgpackr';

const packr = new Packr({ useRecords: false, int64AsType: 'bigint', useBigIntExtension: true });

export function encode(value: unknown): Uint8Array {
  return packr.pack(value);
}

export function decode<T>(bytes: Uint8Array): T {
  return packr.unpack(bytes) as T;
}

const ROOT = 'parlayd';

export const subjects = {
  /** Peer messages to owner `owner` (engine/owner.ts PeerMessage): locks, channel commands, fate questions. */
  ownerPeer: (owner: number) => `${ROOT}.owner.${owner}.peer`,
  /** A look at owner `owner`'s book (its balances, holds and what it still has on its way). */
  ownerBook: (owner: number) => `${ROOT}.owner.${owner}.book`,
  /** Owner `owner`'s part of the cluster's ledger check (ledger-check.ts). */
  ownerCheck: (owner: number) => `${ROOT}.owner.${owner}.check`,
  /** Money calls (ledger/money-ops.ts MoneyCall) for the accounts of partition `partition`. */
  partitionMoney: (partition: number) => `${ROOT}.p.${partition}.money`,
  /** What gateways send RFQ shard `owner` (rfq-wire.ts ToShardNode): its calls and makers' messages, in order. */
  ownerRfq: (owner: number) => `${ROOT}.owner.${owner}.rfq`,
  /** A view of what owner `owner` holds (http/owned-views.ts): request-reply. */
  ownerView: (owner: number) => `${ROOT}.owner.${owner}.view`,
  /** The cluster's partition map, the coordinator's (map-source.ts): request-reply, answered from its start. */
  coordinatorMap: `${ROOT}.coordinator.map`,
  /** What gateways ask the coordinator (coordinator-wire.ts CoordinatorCall): request-reply. */
  coordinatorCall: `${ROOT}.coordinator.call`,
  /** A request a gateway does not serve itself, for the coordinator's HTTP (coordinator-wire.ts ForwardedRequest). */
  coordinatorHttp: `${ROOT}.coordinator.http`,
  /** What changed of the coordinator's state that gateways hold copies of (coordinator-wire.ts CoordinatorChange[]). */
  coordinatorChanges: `${ROOT}.coordinator.changes`,
  /** A reading of a front process's registry for the cluster's dashboard (dashboard-samples.ts): request-many. */
  dashboardSample: `${ROOT}.dashboard.sample`,
  /** RFQ shard `owner`'s events for gateway `gateway` (rfq/messages.ts ShardToMain). */
  gatewayEvents: (gateway: string, owner: number) => `${ROOT}.gateway.${gateway}.owner.${owner}`,
};

/**
 * Messages per NATS message, at most, for the RFQ shards' batches both ways: the largest (an `rfq` broadcast
 * of 8 legs) encodes in ~1.5 KiB, so a publish stays well under nats-server's default 1 MiB max_payload.
 */
export const RFQ_MESSAGES_PER_PUBLISH = 256;

/** A gateway's name on subjects: letters, digits, '-' and '_' (no '.', '*' or '>', which subjects give meaning). */
export const GATEWAY_NAME = /^[A-Za-z0-9_-]{1,64}$/;
