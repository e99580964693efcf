// Scenario `ab` (issue 24): the `unsigned` ladder against two services in one run, alternated, so that two
// builds (or one build with two settings) are compared on the same machine minutes apart rather than in
// separate runs, where this 2-core machine's drift is larger than most differences worth measuring
// (docs/performance.md). A is this build (or BENCH_SERVER_SCRIPT); B is BENCH_AB_SCRIPT, another build's
// `dist/src/main.js`, and/or BENCH_AB_ENV, service variables for B only ("PARLAYD_SHARDS=2 ..."). Pairs run
// A,B then B,A, and so on (BENCH_AB_PAIRS, 3 by default), so a drift over the run weighs on both sides alike.
// Per step it reports each side's median over its runs and B / A. Opt-in: `npm run bench:load -- ab`.
import { resolve } from 'node:path';
import { parseServiceEnv } from '../server.js';
import { ratesFor, runLadder, type LadderResult, type LadderServer } from './rfq-ladder.js';
import type { RunContext, Scenario } from './context.js';

const PERSIST = 'parlayd_rfq_persist_seconds';
const END_TO_END = 'parlayd_rfq_end_to_end_seconds';
const QUOTING = 'parlayd_rfq_quoting_seconds';

/** One offered rate: each side's median over the runs that reached it, and B / A. */
export interface AbRow {
  offeredPerS: number;
  /** Runs of each side that reached this step (a ladder stops after its first saturated step). */
  runs: { a: number; b: number };
  saturated: { a: number; b: number };
  p50Ms: AbFigure;
  p99Ms: AbFigure;
  completedPerS: AbFigure;
  serverCpuPercent: AbFigure;
  /** The server's main thread alone, % of one core (from /proc: every build has it). */
  mainThreadCpuPercent: AbFigure;
  /** The shard threads together, % of one core (only builds that report thread roles). */
  shardThreadsCpuPercent: AbFigure;
  /** Mean of the shard's durable writes over the step (create and terminal commits), ms. */
  persistMeanMs: AbFigure;
  /** Mean of quoting: the rfq frame leaving the shard to the close of quoting (the makers' round trip), ms. */
  quotingMeanMs: AbFigure;
  /** The shards' transactions per group commit over the step: its flushes are 2 per commit. */
  transactionsPerCommit: AbFigure;
  /** Mean of the server's end to end: created_at to the durable terminal result reaching the HTTP side, ms. */
  endToEndMeanMs: AbFigure;
}

export interface AbFigure {
  a: number | null;
  b: number | null;
  /** b / a, rounded to 3 places; null when either is missing or a is 0. */
  ratio: number | null;
}

export interface AbResult {
  pairs: number;
  b: { script: string | null; env: Record<string, string> };
  admissionPerS: AbFigure;
  rows: AbRow[];
  /** Every run, in the order run: what the medians were taken from. */
  runs: Array<{ side: 'a' | 'b'; result: LadderResult }>;
}

export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  const value = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return Math.round(value * 1000) / 1000;
}

function figure(a: readonly number[], b: readonly number[]): AbFigure {
  const ma = median(a);
  const mb = median(b);
  return { a: ma, b: mb, ratio: ma === null || mb === null || ma === 0 ? null : Math.round((mb / ma) * 1000) / 1000 };
}

/** Each offered rate any run reached, with both sides' medians: what the report prints. */
export function summarizeAb(a: readonly LadderResult[], b: readonly LadderResult[]): { admissionPerS: AbFigure; rows: AbRow[] } {
  const rates = [...new Set([...a, ...b].flatMap((r) => r.steps.map((s) => s.offeredPerS)))].sort((x, y) => x - y);
  const rows = rates.map((offeredPerS): AbRow => {
    const at = (side: readonly LadderResult[]) => side.flatMap((r) => r.steps.filter((s) => s.offeredPerS === offeredPerS));
    const [sa, sb] = [at(a), at(b)];
    const of = (pick: (s: (typeof sa)[number]) => number | undefined) =>
      figure(
        sa.map(pick).filter((v): v is number => v !== undefined),
        sb.map(pick).filter((v): v is number => v !== undefined),
      );
    return {
      offeredPerS,
      runs: { a: sa.length, b: sb.length },
      saturated: { a: sa.filter((s) => s.isSaturatedStep).length, b: sb.filter((s) => s.isSaturatedStep).length },
      p50Ms: of((s) => s.latency.p50Ms),
      p99Ms: of((s) => s.latency.p99Ms),
      completedPerS: of((s) => s.throughputPerS),
      serverCpuPercent: of((s) => s.cpu.serverPercent),
      mainThreadCpuPercent: of((s) => s.cpu.serverMainThreadPercent),
      shardThreadsCpuPercent: of((s) => shardThreadsPercent(s.threads)),
      persistMeanMs: of((s) => s.stages?.[PERSIST]),
      quotingMeanMs: of((s) => s.stages?.[QUOTING]),
      transactionsPerCommit: of((s) =>
        s.commits === undefined || s.commits.commits === 0 ? undefined : s.commits.transactions / s.commits.commits,
      ),
      endToEndMeanMs: of((s) => s.stages?.[END_TO_END]),
    };
  });
  return {
    admissionPerS: figure(
      a.map((r) => r.admission.reqPerS),
      b.map((r) => r.admission.reqPerS),
    ),
    rows,
  };
}

/** The shard threads' CPU together, or undefined when the step has no thread roles. */
function shardThreadsPercent(threads: Record<string, number> | undefined): number | undefined {
  if (threads === undefined) return undefined;
  return Object.entries(threads).reduce((sum, [role, percent]) => (role.startsWith('shard-') ? sum + percent : sum), 0);
}

/** A figure as the log and the summary print it: `A / B (B / A)`, `-` for what is missing. */
export const formatAbFigure = (f: AbFigure) => `${f.a ?? '-'} / ${f.b ?? '-'} (${f.ratio ?? '-'})`;

async function runAb(ctx: RunContext): Promise<AbResult> {
  const script = process.env['BENCH_AB_SCRIPT'];
  const env = parseServiceEnv(process.env['BENCH_AB_ENV'] ?? '');
  if (script === undefined && Object.keys(env).length === 0) {
    throw new Error('scenario ab needs BENCH_AB_SCRIPT (another build: dist/src/main.js) and/or BENCH_AB_ENV ("K=V ...") for B');
  }
  const pairs = Number(process.env['BENCH_AB_PAIRS'] ?? (ctx.isQuick ? 1 : 3));
  const rates = ratesFor(ctx, [500], [250, 1000, 2000]);
  const sides: Record<'a' | 'b', LadderServer> = { a: {}, b: { env, ...(script === undefined ? {} : { script: resolve(script) }) } };
  const runs: AbResult['runs'] = [];
  for (let pair = 0; pair < pairs; pair++) {
    for (const side of pair % 2 === 0 ? (['a', 'b'] as const) : (['b', 'a'] as const)) {
      const result = await runLadder(ctx, 'unsigned', rates, sides[side]);
      runs.push({ side, result });
      const steps = result.steps.map(
        (s) => `@${s.offeredPerS}/s p50 ${s.latency.p50Ms} p99 ${s.latency.p99Ms}${s.isSaturatedStep ? ' (saturated)' : ''}`,
      );
      ctx.log(`pair ${pair + 1}/${pairs} ${side.toUpperCase()}: admission ${result.admission.reqPerS}/s; ${steps.join('; ')}`);
    }
  }
  const summary = summarizeAb(
    runs.filter((r) => r.side === 'a').map((r) => r.result),
    runs.filter((r) => r.side === 'b').map((r) => r.result),
  );
  ctx.log(`A / B (B / A), medians: admission ${formatAbFigure(summary.admissionPerS)} RFQ/s`);
  for (const row of summary.rows) {
    ctx.log(
      `@${row.offeredPerS}/s: p50 ${formatAbFigure(row.p50Ms)} ms, p99 ${formatAbFigure(row.p99Ms)} ms, persist ${formatAbFigure(row.persistMeanMs)} ms, ` +
        `quoting ${formatAbFigure(row.quotingMeanMs)} ms, transactions per commit ${formatAbFigure(row.transactionsPerCommit)}, ` +
        `server CPU ${formatAbFigure(row.serverCpuPercent)} % (main thread ${formatAbFigure(row.mainThreadCpuPercent)} %, ` +
        `shards ${formatAbFigure(row.shardThreadsCpuPercent)} %), saturated ${row.saturated.a}/${row.runs.a} and ${row.saturated.b}/${row.runs.b}`,
    );
  }
  return { pairs, b: { script: script ?? null, env }, ...summary, runs };
}

export const ab: Scenario<AbResult> = {
  name: 'ab',
  describe: 'opt-in: the unsigned ladder alternated between this build and BENCH_AB_SCRIPT / BENCH_AB_ENV; medians and B / A',
  isOptIn: true,
  run: runAb,
};
