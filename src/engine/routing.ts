// Any thread; pure. Which owner an account or a credit key belongs to: the protocol's on owner 0, a user's on
// the owner of the user's RFQs (the shard its id hashes to, rfq/ids.ts shardOfUser: an RFQ's reservation is
// then always local), every other name by its own hash. FNV-1a over UTF-16 code units modulo the owner count:
// cheap, no native call, spread evenly. A balance outlives a restart, unlike an RFQ, so this mapping is part
// of the data: changing the function or the owner count needs the owners' state moved with it.
import { PROTOCOL, userIdOf, type AccountId } from '../records/ledger.js';

/** FNV-1a of `text` modulo `count`. */
export function hashMod(text: string, count: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0) % count;
}

export function ownerOfName(owners: number): (name: AccountId) => number {
  return (name) => {
    if (name === PROTOCOL || owners === 1) return 0;
    return hashMod(userIdOf(name) ?? name, owners);
  };
}
