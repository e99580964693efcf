// A deterministic stream of read-model writes (store/write-behind.ts): the writes of seq s are a function of s
// alone, so a test can compute the state after any prefix of seqs and compare LMDB to it key by key. Shared by
// test/store/write-behind.test.ts and the writer it kills (test/store/fixtures/write-until-killed.ts).
import type { BlindWrite } from '../../src/store/records.js';

/** The databases the stream writes: a number, an index entry that comes and goes, and an object record. */
export const STREAM_DBS = ['marketWindows', 'mentionMarkets', 'rfqKeys'] as const;

/** Seq `seq`'s writes: overwrites, removes of keys that may or may not exist, and objects with a structure. */
export function streamWrites(seq: number): BlindWrite[] {
  return [
    { db: 'marketWindows', key: `n${seq % 97}`, value: seq },
    { db: 'marketWindows', key: `n${(seq * 7) % 89}`, value: seq * 2 },
    { db: 'mentionMarkets', key: `m${seq % 31}`, value: seq % 3 === 0 ? undefined : true },
    { db: 'rfqKeys', key: `r${seq % 53}`, value: { requestId: `id-${seq}`, contentHash: `hash-${seq}` } },
  ];
}

/** The state after seqs 1..seq: `${db}/${key}` -> value, removed keys absent. */
export function streamState(seq: number): Map<string, unknown> {
  const state = new Map<string, unknown>();
  for (let s = 1; s <= seq; s++) {
    for (const write of streamWrites(s)) {
      if (write.value === undefined) state.delete(`${write.db}/${write.key}`);
      else state.set(`${write.db}/${write.key}`, write.value);
    }
  }
  return state;
}
