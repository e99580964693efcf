// Any thread; pure. A range read that starts from a key a request named (a page cursor's position) is held
// inside its owner's range at both ends: whatever the key, the read never walks into another owner's keys
// (a withdrawals page started at another account's key and read down into it). Cursors are
// authenticated (contract/paging.ts); this is the second wall, so a bug there still cannot show another's rows.

/** `key` held inside [low, high] (LMDB keys compare as strings here): low below it, high above it. */
export function clampKey(key: string, low: string, high: string): string {
  if (key < low) return low;
  if (key > high) return high;
  return key;
}
