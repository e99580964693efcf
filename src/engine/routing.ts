// Any thread; pure. Which owner an account or a credit key belongs to: the protocol's on owner 0, every other
// name by FNV-1a over its UTF-16 code units modulo the owner count (cheap, no native call, spread evenly). A
// balance outlives a restart, unlike an RFQ, so this mapping is part of the data: changing the function or the
// owner count needs the owners' state moved with it.
import { PROTOCOL, type AccountId } from '../ledger/accounts.js';

export function ownerOfName(owners: number): (name: AccountId) => number {
  return (name) => {
    if (name === PROTOCOL || owners === 1) return 0;
    let h = 0x811c9dc5;
    for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
    return (h >>> 0) % owners;
  };
}
