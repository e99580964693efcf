// Load generator, main thread. Writes what a run measured: bench/results/<scenario>.json per scenario (with
// the run id, the machine and the mode), bench/results/summary.md (the targets, each as a ratio of figures
// from this run), and the SVG charts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ClosedLoopResult } from './closed-loop.js';
import { machineInfo, type MachineInfo } from './machine.js';
import { repoRoot } from './server.js';
import { barChart, lineChart } from './svg.js';
import { formatAbFigure as cell, type AbResult } from './scenarios/ab.js';
import type { CeilingResult } from './scenarios/ceiling.js';
import type { FanoutResult } from './scenarios/fanout.js';
import { FANOUT_TARGETS, fanoutVsBare, meetsFanoutTarget } from './fanout-targets.js';
import type { GetResult } from './scenarios/get.js';
import type { HandshakeResult } from './scenarios/handshake.js';
import type { MemoryResult } from './scenarios/memory.js';
import type { MicroResult } from './scenarios/micro.js';
import type { LadderResult } from './scenarios/rfq-ladder.js';
import type { ShardsResult } from './scenarios/shards.js';
import type { StorageBoundResult } from './scenarios/storage-bound.js';

export const resultsDir = resolve(repoRoot, 'bench/results');

export interface RunMeta {
  runId: string;
  isQuick: boolean;
  machine: MachineInfo;
}

export function writeScenario(meta: RunMeta, scenario: string, result: unknown): void {
  mkdirSync(resultsDir, { recursive: true });
  const body = { scenario, runId: meta.runId, when: new Date().toISOString(), isQuick: meta.isQuick, machine: machineInfo(), result };
  writeFileSync(join(resultsDir, `${scenario}.json`), JSON.stringify(body, null, 2) + '\n');
}

interface Results {
  ceiling?: CeilingResult;
  micro?: MicroResult;
  get?: GetResult;
  unsigned?: LadderResult;
  signed?: LadderResult;
  fanout?: FanoutResult;
  handshake?: HandshakeResult;
  shards?: ShardsResult;
  memory?: MemoryResult;
  ab?: AbResult;
  'storage-bound'?: StorageBoundResult;
}

/** 'missed; so does the storage bound': the service with LMDB never flushed misses too, so no storage change reaches it here. */
type Verdict = 'met' | 'missed' | 'missed; so does the storage bound' | 'not run';

export interface TargetRow {
  target: string;
  measured: string;
  ratio: string;
  verdict: Verdict;
}

const pct = (x: number) => `${Math.round(x * 1000) / 10} %`;
const times = (x: number) => `${x >= 10 ? Math.round(x) : Math.round(x * 100) / 100}×`;
const verdict = (isMet: boolean): Verdict => (isMet ? 'met' : 'missed');
/** `isBoundMet`: the same target against scenario `storage-bound`'s service; null when it was not run. */
const storageVerdict = (isMet: boolean, isBoundMet: boolean | null): Verdict =>
  isMet ? 'met' : isBoundMet === false ? 'missed; so does the storage bound' : 'missed';

// Each RFQ-path target as a test of one ladder, applied to the service and to the storage bound alike.
const stepAt = (ladder: LadderResult, offeredPerS: number) => ladder.steps.find((s) => s.offeredPerS === offeredPerS);
function meets2000(ladder: LadderResult): boolean {
  const at = stepAt(ladder, 2000);
  return at !== undefined && at.latency.p50Ms <= 2 && at.latency.p99Ms <= 10 && at.errors === 0 && !at.isSaturated;
}
function meets4000(ladder: LadderResult): boolean {
  const at = stepAt(ladder, 4000);
  return at !== undefined && at.latency.p99Ms <= 10 && at.errors === 0 && !at.isSaturatedStep;
}
const meetsSustained = (ladder: LadderResult) => ladder.sustainedPerS >= 5000;
const meetsSigned = (ladder: LadderResult) => (ladder.admissionOfRecoveryBound ?? 0) >= 0.5;
/** A step's figures, or where the ladder stopped short of it. */
function stepText(ladder: LadderResult, offeredPerS: number): string {
  const at = stepAt(ladder, offeredPerS);
  if (at !== undefined) return `p50 ${at.latency.p50Ms} ms, p99 ${at.latency.p99Ms} ms, ${at.errors} errors, ${at.throughputPerS}/s`;
  const last = ladder.steps.at(-1);
  return last?.isSaturatedStep === true ? `saturated at ${last.offeredPerS}/s offered (${last.throughputPerS}/s done)` : '-';
}

/** The fan-out targets against the bare server of the same run (fanout-targets.ts); 'not run' without both. */
export function fanoutTargetRows(fanout: FanoutResult | undefined): TargetRow[] {
  return FANOUT_TARGETS.map((t) => {
    const target =
      `fanout to ${t.makers.toLocaleString('en-US')} makers: deliveries/s ≥ ${t.minDeliveriesRatio} × bare` +
      (t.maxP99Ratio === null ? '' : `, last-maker p99 ≤ ${t.maxP99Ratio} × bare`);
    const step = fanout?.steps.find((s) => s.makers === t.makers);
    if (step === undefined || step.bare === null || step.bare === undefined)
      return { target, measured: '-', ratio: '-', verdict: 'not run' };
    const vs = fanoutVsBare(step, step.bare);
    return {
      target,
      measured:
        `${step.deliveriesPerS} deliveries/s (bare ${step.bare.deliveriesPerS}), ` +
        `p99 ${step.lastMaker.p99Ms} ms (bare ${step.bare.lastMaker.p99Ms} ms), ${step.shed} shed`,
      ratio: `deliveries ${times(vs.deliveries)}, p99 ${times(vs.lastMakerP99)} the bare server's`,
      verdict: verdict(meetsFanoutTarget(t, step, step.bare) && step.missedReceipts === 0),
    };
  });
}

export function targetRows(r: Results): TargetRow[] {
  const rows: TargetRow[] = [];
  if (r.get !== undefined && r.ceiling !== undefined) {
    const ofUws = r.get.reqPerS / r.ceiling.uws.reqPerS;
    const ofHttp = r.get.reqPerS / r.ceiling.http.reqPerS;
    rows.push({
      target: 'get ≥ 50 % of the uWS ceiling, and above node:http',
      measured: `${r.get.reqPerS} req/s (uWS ${r.ceiling.uws.reqPerS}, node:http ${r.ceiling.http.reqPerS})`,
      ratio: `${pct(ofUws)} of uWS, ${pct(ofHttp)} of node:http`,
      verdict: verdict(ofUws >= 0.5 && ofHttp > 1),
    });
  } else rows.push({ target: 'get ≥ 50 % of uWS, > node:http', measured: '-', ratio: '-', verdict: 'not run' });

  // Scenario `storage-bound`: the same ladders against the service with LMDB never flushed.
  const noFlush = r['storage-bound'];
  const boundText = (describe: (b: StorageBoundResult) => string) => (noFlush === undefined ? '' : `; storage bound: ${describe(noFlush)}`);
  const boundMeets = (meets: (b: StorageBoundResult) => boolean) => (noFlush === undefined ? null : meets(noFlush));
  const at2000 = r.unsigned === undefined ? undefined : stepAt(r.unsigned, 2000);
  if (r.unsigned !== undefined && at2000 !== undefined) {
    rows.push({
      target: 'unsigned @ 2,000/s, 10 makers: p50 ≤ 2 ms, p99 ≤ 10 ms, no errors',
      measured:
        `p50 ${at2000.latency.p50Ms} ms, p99 ${at2000.latency.p99Ms} ms, p99.9 ${at2000.latency.p999Ms} ms, ${at2000.errors} errors, ${at2000.throughputPerS}/s` +
        boundText((b) => stepText(b.unsigned, 2000)),
      ratio: `p50 ${times(at2000.latency.p50Ms / 2)} / p99 ${times(at2000.latency.p99Ms / 10)} the target`,
      verdict: storageVerdict(
        meets2000(r.unsigned),
        boundMeets((b) => meets2000(b.unsigned)),
      ),
    });
  } else rows.push({ target: 'unsigned @ 2,000/s', measured: '-', ratio: '-', verdict: 'not run' });

  // Issue 24's storage targets: at 4,000/s offered (a ladder stops after its first saturated step, so a step
  // never reached counts as missed), and the highest rate sustained.
  if (r.unsigned !== undefined) {
    const at4000 = stepAt(r.unsigned, 4000);
    const last = r.unsigned.steps.at(-1);
    // No 4,000/s step: missed when the ladder stopped at a saturated step below it, not run when BENCH_RATES left it out.
    const stoppedBelow = at4000 === undefined && last?.isSaturatedStep === true && last.offeredPerS < 4000;
    rows.push({
      target: 'unsigned @ 4,000/s, 10 makers: p99 ≤ 10 ms, no errors',
      measured:
        (at4000 !== undefined ? stepText(r.unsigned, 4000) : stoppedBelow ? `not reached: the ladder ${stepText(r.unsigned, 4000)}` : '-') +
        boundText((b) => stepText(b.unsigned, 4000)),
      ratio: at4000 === undefined ? '-' : `p99 ${times(at4000.latency.p99Ms / 10)} the target`,
      verdict:
        at4000 === undefined && !stoppedBelow
          ? 'not run'
          : storageVerdict(
              meets4000(r.unsigned),
              boundMeets((b) => meets4000(b.unsigned)),
            ),
    });
    rows.push({
      target: 'unsigned sustained ≥ 5,000 RFQ/s (open loop, 10 makers)',
      measured:
        `${r.unsigned.sustainedPerS}/s sustained, ${r.unsigned.peakPerS}/s peak` +
        boundText((b) => `${b.unsigned.sustainedPerS}/s sustained, ${b.unsigned.peakPerS}/s peak`),
      ratio: `${pct(r.unsigned.sustainedPerS / 5000)} of the target`,
      verdict: storageVerdict(
        meetsSustained(r.unsigned),
        boundMeets((b) => meetsSustained(b.unsigned)),
      ),
    });
  } else rows.push({ target: 'unsigned @ 4,000/s; sustained ≥ 5,000/s', measured: '-', ratio: '-', verdict: 'not run' });

  if (r.signed !== undefined && r.signed.recoveriesPerSAllCores !== null) {
    const ofCores = r.signed.admission.reqPerS / r.signed.recoveriesPerSAllCores;
    // ?? null: results written before the bound was measured lack these fields.
    const bound = r.signed.recoveryBound ?? null;
    const admissionOfBound = r.signed.admissionOfRecoveryBound ?? null;
    rows.push({
      // Issue 24 replaced "≥ 80 % of all cores' recoveries", which the bound itself cannot reach here.
      target: 'signed admission ≥ 50 % of the recovery bound (HTTP + recovery only, every core, same client)',
      measured:
        `${r.signed.admission.reqPerS} RFQ/s admitted (no makers); bound ${bound?.reqPerS ?? '-'} req/s; ` +
        `${r.signed.recoveriesPerSAllCores} recoveries/s of all cores (${r.micro?.recoverBackend ?? '?'}); with 10 makers ${r.signed.sustainedPerS}/s sustained` +
        boundText(
          (b) =>
            `${b.signed.admission.reqPerS} RFQ/s admitted against a bound of ${b.signed.recoveryBound?.reqPerS ?? '-'} req/s ` +
            `(${pct(b.signed.admissionOfRecoveryBound ?? 0)})`,
        ),
      ratio: `${admissionOfBound === null ? '-' : pct(admissionOfBound)} of the bound (${pct(ofCores)} of all cores' recoveries)`,
      verdict:
        admissionOfBound === null
          ? 'not run'
          : storageVerdict(
              meetsSigned(r.signed),
              boundMeets((b) => meetsSigned(b.signed)),
            ),
    });
  } else rows.push({ target: 'signed admission ≥ 50 % of the recovery bound', measured: '-', ratio: '-', verdict: 'not run' });

  const fan1000 = r.fanout?.steps.find((s) => s.makers === 1000);
  if (fan1000 !== undefined) {
    rows.push({
      target: 'fanout to 1,000 makers: p99 ≤ 20 ms admission → last maker',
      measured: `p50 ${fan1000.lastMaker.p50Ms} ms, p99 ${fan1000.lastMaker.p99Ms} ms, max ${fan1000.lastMaker.maxMs} ms`,
      ratio: `p99 ${times(fan1000.lastMaker.p99Ms / 20)} the target`,
      verdict: verdict(fan1000.lastMaker.p99Ms <= 20 && fan1000.missedReceipts === 0),
    });
  } else rows.push({ target: 'fanout to 1,000 makers p99 ≤ 20 ms', measured: '-', ratio: '-', verdict: 'not run' });
  rows.push(...fanoutTargetRows(r.fanout));

  if (r.memory !== undefined) {
    const m = r.memory;
    rows.push({
      target: `RSS ≤ 1 GiB with ${m.storedRfqs} stored RFQs, ${m.activeRfqs} active, ${m.makers} makers`,
      measured: `${Math.round(m.afterMakers.rssBytes / 1024 ** 2)} MiB; ${m.bytesPerMakerConnection} B/maker, ${m.bytesPerActiveRfq} B/active RFQ, ${m.bytesPerStoredRfq} B/stored RFQ`,
      ratio: `${pct(m.rssGiB)} of 1 GiB`,
      verdict: verdict(m.rssGiB <= 1),
    });
  } else rows.push({ target: 'RSS ≤ 1 GiB', measured: '-', ratio: '-', verdict: 'not run' });
  return rows;
}

function httpRow(name: string, x: ClosedLoopResult): Array<string | number> {
  return [
    name,
    x.reqPerS,
    x.latency.p50Ms,
    x.latency.p99Ms,
    x.errors,
    x.cpu?.serverPercent ?? '-',
    x.cpu?.clientPercent ?? '-',
    x.cpu?.serverUsPerReq ?? '-',
  ];
}

function table(headers: string[], rows: Array<Array<string | number>>): string {
  return [`| ${headers.join(' | ')} |`, `|${headers.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

export function writeSummary(meta: RunMeta, r: Results, earlier: string[] = []): void {
  const m = meta.machine;
  const out: string[] = [
    '# bench:load summary',
    '',
    `Run \`${meta.runId}\`${meta.isQuick ? ' (**--quick**: a smoke run, not figures)' : ''}, ${new Date().toISOString()}.`,
    `Machine: ${m.cores} cores, ${m.cpuModel}, ${m.memoryGiB} GiB, node ${m.node}, load average ${m.loadAverage1m} at start.`,
    'Every ratio divides two figures of this run. Method: docs/performance.md.',
    ...(earlier.length === 0 ? [] : [`Not run this time, shown from an earlier run: ${earlier.join(', ')}.`]),
    '',
    '## Targets',
    '',
    table(
      ['target', 'measured', 'ratio', 'verdict'],
      targetRows(r).map((t) => [t.target, t.measured, t.ratio, t.verdict]),
    ),
    '',
  ];
  if (r.ceiling !== undefined || r.get !== undefined) {
    const rows: Array<Array<string | number>> = [];
    if (r.ceiling !== undefined) {
      rows.push(httpRow('uWS empty handler', r.ceiling.uws), httpRow('node:http empty handler', r.ceiling.http));
    }
    if (r.get !== undefined) rows.push(httpRow('parlayd GET /v1/rfq/{id}', r.get));
    out.push(
      '## HTTP (closed loop, 64 connections, raw keep-alive client)',
      '',
      table(['server', 'req/s', 'p50 ms', 'p99 ms', 'errors', 'server CPU %', 'client CPU %', 'server CPU µs/req'], rows),
      '',
      "A client at ~100 % CPU means the figure is the client's limit; server CPU µs per request still compares the servers.",
      '',
    );
  }
  const ladders: Array<[LadderResult | undefined, string]> = [
    [r.unsigned, ''],
    [r.signed, ''],
    [r['storage-bound']?.unsigned, 'Storage bound (LMDB never flushed, not durable): '],
  ];
  for (const [ladder, title] of ladders) {
    if (ladder === undefined) continue;
    const bound = ladder.recoveryBound ?? null; // absent from results written before it was measured
    out.push(
      `## ${title}${ladder.kind} RFQs, open loop, ${ladder.makers} quoting makers, ${ladder.shards} shard(s): create → completed`,
      '',
      table(
        [
          'offered /s',
          'completed /s',
          'p50 ms',
          'p99 ms',
          'p99.9 ms',
          'max ms',
          'errors',
          'send lag p99 ms',
          'CPU server/client %',
          'saturated',
        ],
        ladder.steps.map((s) => [
          s.offeredPerS,
          s.throughputPerS,
          s.latency.p50Ms,
          s.latency.p99Ms,
          s.latency.p999Ms,
          s.latency.maxMs,
          s.errors + (s.scheduled - s.sent),
          s.sendLag.p99Ms,
          `${s.cpu.serverPercent} / ${s.cpu.clientPercent}`,
          s.isSaturatedStep ? 'yes' : '',
        ]),
      ),
      '',
      `Sustained ${ladder.sustainedPerS}/s, peak ${ladder.peakPerS}/s. Admission alone (no makers, 128 callers): ` +
        `${ladder.admission.reqPerS} RFQ/s, p50 ${ladder.admission.latency.p50Ms} ms, server CPU ${ladder.admission.cpu?.serverPercent ?? '?'} %.` +
        (ladder.recoveriesPerSAllCores === null
          ? ''
          : ` Recoveries/s of all cores (bench:micro, this run): ${ladder.recoveriesPerSAllCores}.`) +
        (bound === null
          ? ''
          : ` The recovery bound (the same requests against a server that only parses, hashes and recovers, on every core): ` +
            `${bound.reqPerS} req/s, server CPU ${bound.cpu?.serverPercent ?? '?'} %.`),
      '',
    );
  }
  if (r.fanout !== undefined) {
    out.push(
      '## Fan-out: POST sent → rfq received by the last maker (makers declining)',
      '',
      table(
        [
          'makers',
          'samples',
          'last p50 ms',
          'last p99 ms',
          'last max ms',
          'first p50 ms',
          'server broadcast ms',
          'RFQ/s',
          'deliveries/s',
          'missed',
          'shed',
          'bare last p99 ms',
          'bare deliveries/s',
          'deliveries ÷ bare',
          'p99 ÷ bare',
        ],
        r.fanout.steps.map((s) => [
          s.makers,
          s.samples,
          s.lastMaker.p50Ms,
          s.lastMaker.p99Ms,
          s.lastMaker.maxMs,
          s.firstMaker.p50Ms,
          s.serverBroadcastMs,
          s.rfqPerS,
          s.deliveriesPerS,
          s.missedReceipts,
          s.shed ?? '-',
          s.bare?.lastMaker.p99Ms ?? '-',
          s.bare?.deliveriesPerS ?? '-',
          s.bare == null ? '-' : fanoutVsBare(s, s.bare).deliveries,
          s.bare == null ? '-' : fanoutVsBare(s, s.bare).lastMakerP99,
        ]),
      ),
      '',
    );
  }
  if (r.handshake !== undefined) {
    const h = r.handshake;
    out.push(
      '## Maker handshakes',
      '',
      table(
        ['handshakes/s', 'p50 ms', 'p99 ms', 'failures', 'concurrency'],
        [[h.handshakesPerS, h.latency.p50Ms, h.latency.p99Ms, h.failures, h.concurrency]],
      ),
      '',
    );
  }
  if (r.shards !== undefined) {
    out.push(
      '## Shards (closed loop, 128 callers, 10 quoting makers)',
      '',
      table(
        ['shards', 'completed RFQ/s', 'p50 ms', 'p99 ms', 'errors', 'server CPU %', 'client CPU %'],
        r.shards.steps.map((s) => [
          s.shards,
          s.reqPerS,
          s.latency.p50Ms,
          s.latency.p99Ms,
          s.errors,
          s.cpu?.serverPercent ?? '-',
          s.cpu?.clientPercent ?? '-',
        ]),
      ),
      '',
    );
  }
  if (r.ab !== undefined) {
    const b = r.ab.b;
    out.push(
      `## A/B: unsigned ladder, ${r.ab.pairs} alternated pair(s); each cell A / B (B / A), medians`,
      '',
      `A: this build. B: ${b.script ?? 'this build'}${
        Object.keys(b.env).length === 0
          ? ''
          : ` with ${Object.entries(b.env)
              .map(([k, v]) => `${k}=${v}`)
              .join(' ')}`
      }. Admission (no makers, closed loop): ${cell(r.ab.admissionPerS)} RFQ/s.`,
      '',
      table(
        [
          'offered /s',
          'p50 ms',
          'p99 ms',
          'completed /s',
          'persist mean ms',
          'quoting mean ms',
          'transactions per commit',
          'create → terminal mean ms',
          'server CPU %',
          'main thread CPU %',
          'shard threads CPU %',
          'saturated A, B',
        ],
        r.ab.rows.map((row) => [
          row.offeredPerS,
          cell(row.p50Ms),
          cell(row.p99Ms),
          cell(row.completedPerS),
          cell(row.persistMeanMs),
          cell(row.quotingMeanMs),
          cell(row.transactionsPerCommit),
          cell(row.endToEndMeanMs),
          cell(row.serverCpuPercent),
          cell(row.mainThreadCpuPercent),
          cell(row.shardThreadsCpuPercent),
          `${row.saturated.a}/${row.runs.a}, ${row.saturated.b}/${row.runs.b}`,
        ]),
      ),
      '',
    );
  }
  if (r.memory !== undefined) {
    const mm = r.memory;
    const mib = (b: number) => Math.round(b / 1024 ** 2);
    out.push(
      '## Memory (server RSS from /proc)',
      '',
      table(
        ['state', 'RSS MiB', 'anon MiB', 'file MiB'],
        [
          ['started', mib(mm.baseline.rssBytes), mib(mm.baseline.rssAnonBytes), mib(mm.baseline.rssFileBytes)],
          [
            `+ ${mm.storedRfqs} stored RFQs`,
            mib(mm.afterStored.rssBytes),
            mib(mm.afterStored.rssAnonBytes),
            mib(mm.afterStored.rssFileBytes),
          ],
          [
            `+ ${mm.activeRfqs} active RFQs`,
            mib(mm.afterActive.rssBytes),
            mib(mm.afterActive.rssAnonBytes),
            mib(mm.afterActive.rssFileBytes),
          ],
          [`+ ${mm.makers} makers`, mib(mm.afterMakers.rssBytes), mib(mm.afterMakers.rssAnonBytes), mib(mm.afterMakers.rssFileBytes)],
        ],
      ),
      '',
      `Bytes per stored RFQ ${mm.bytesPerStoredRfq}, per active RFQ ${mm.bytesPerActiveRfq}, per maker connection ${mm.bytesPerMakerConnection}.`,
      '',
    );
  }
  out.push(
    'Charts: ' +
      ['http.svg', 'unsigned-latency.svg', 'signed-latency.svg', 'fanout.svg', 'fanout-throughput.svg', 'shards.svg']
        .map((f) => `[${f}](${f})`)
        .join(', '),
    '',
  );
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, 'summary.md'), out.join('\n'));
  writeCharts(r);
}

function writeCharts(r: Results): void {
  const write = (name: string, svg: string) => writeFileSync(join(resultsDir, name), svg);
  if (r.ceiling !== undefined || r.get !== undefined) {
    const bars = [];
    if (r.ceiling !== undefined)
      bars.push({ label: 'uWS empty', value: r.ceiling.uws.reqPerS }, { label: 'node:http empty', value: r.ceiling.http.reqPerS });
    if (r.get !== undefined) bars.push({ label: 'parlayd GET /v1/rfq/{id}', value: r.get.reqPerS });
    write('http.svg', barChart({ title: 'HTTP throughput, closed loop, 64 connections', yLabel: 'requests / s', bars }));
  }
  for (const ladder of [r.unsigned, r.signed]) {
    if (ladder === undefined) continue;
    const series = (name: string, pick: (s: LadderResult['steps'][number]) => number) => ({
      name,
      points: ladder.steps.map((s) => [s.offeredPerS, Math.max(pick(s), 0.01)] as [number, number]),
    });
    write(
      `${ladder.kind}-latency.svg`,
      lineChart({
        title: `${ladder.kind} RFQ create → completed vs offered load (open loop, ${ladder.makers} makers)`,
        xLabel: 'offered RFQ / s',
        yLabel: 'latency ms (log)',
        isLogY: true,
        series: [
          series('p50', (s) => s.latency.p50Ms),
          series('p99', (s) => s.latency.p99Ms),
          series('p99.9', (s) => s.latency.p999Ms),
          series('max', (s) => s.latency.maxMs),
        ],
        marks:
          ladder.kind === 'unsigned'
            ? [
                { y: 2, label: 'p50 target' },
                { y: 10, label: 'p99 target' },
              ]
            : [],
      }),
    );
  }
  if (r.fanout !== undefined) {
    const steps = r.fanout.steps;
    write(
      'fanout.svg',
      lineChart({
        title: 'Fan-out: POST sent → last maker received',
        xLabel: 'connected makers (log)',
        yLabel: 'latency ms (log)',
        isLogX: true,
        isLogY: true,
        series: [
          { name: 'p50', points: steps.map((s) => [s.makers, Math.max(s.lastMaker.p50Ms, 0.01)] as [number, number]) },
          { name: 'p99', points: steps.map((s) => [s.makers, Math.max(s.lastMaker.p99Ms, 0.01)] as [number, number]) },
          ...(steps.every((s) => s.bare != null)
            ? [{ name: 'bare uWS p99', points: steps.map((s) => [s.makers, Math.max(s.bare!.lastMaker.p99Ms, 0.01)] as [number, number]) }]
            : []),
        ],
        marks: [{ y: 20, label: 'p99 target' }],
      }),
    );
    write(
      'fanout-throughput.svg',
      barChart({
        title: 'RFQ throughput against connected makers (declining)',
        yLabel: 'RFQ / s',
        bars: steps.map((s) => ({ label: `${s.makers} makers`, value: s.rfqPerS })),
      }),
    );
  }
  if (r.shards !== undefined) {
    write(
      'shards.svg',
      barChart({
        title: 'Completed RFQ/s against shard workers (10 quoting makers)',
        yLabel: 'RFQ / s',
        bars: r.shards.steps.map((s) => ({ label: `${s.shards} shard${s.shards > 1 ? 's' : ''}`, value: s.reqPerS })),
      }),
    );
  }
}

export type { Results };
