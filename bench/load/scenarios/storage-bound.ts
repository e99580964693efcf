// Scenario `storage-bound` (issue 24): the `unsigned` ladder and signed admission against the service with
// LMDB's flushes turned off (no-flush-main.ts: not durable, a bound only). A durable write cannot cost less
// than nothing, so whatever this run misses, no storage layout, log or commit scheme reaches on this
// machine: the summary marks a target both miss "missed; so does the storage bound" (report.ts). Run after
// `unsigned` and `signed` (the full run's order), its figures sit beside theirs, minutes apart.
import { resolve } from 'node:path';
import { repoRoot } from '../server.js';
import { runLadder, unsignedRates, type LadderResult } from './rfq-ladder.js';
import type { Scenario } from './context.js';

export const NO_FLUSH_MAIN = resolve(repoRoot, 'dist/bench/load/no-flush-main.js');

export interface StorageBoundResult {
  /** The unsigned ladder, same rates as scenario `unsigned`. */
  unsigned: LadderResult;
  /** Signed admission and its recovery bound, measured again in this sitting; no ladder steps. */
  signed: LadderResult;
}

export const storageBound: Scenario<StorageBoundResult> = {
  name: 'storage-bound',
  describe: 'the unsigned ladder and signed admission with LMDB never flushed: what no storage layout can beat here',
  async run(ctx) {
    const side = { script: NO_FLUSH_MAIN };
    const unsigned = await runLadder(ctx, 'unsigned', unsignedRates(ctx), side);
    const signed = await runLadder(ctx, 'signed', [], side);
    ctx.log(
      `storage bound: unsigned ${unsigned.sustainedPerS}/s sustained, ${unsigned.peakPerS}/s peak; ` +
        `signed admission ${signed.admission.reqPerS} RFQ/s, ${signed.admissionOfRecoveryBound} of the recovery bound`,
    );
    return { unsigned, signed };
  },
};
