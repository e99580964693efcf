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
};
