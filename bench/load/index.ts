// `npm run bench:load -- [scenario ...] [--quick] [--cpu-prof DIR]`
// (`node dist/bench/load/index.js ...`): the load generator. Runs the named scenarios (default: all but the
// opt-in `ab`, in the order below: the denominators first) against the real service started as a child
// process on a fresh data dir, writes bench/results/<scenario>.json after each, then bench/results/summary.md
// and the SVG charts. --quick is a smoke run of seconds that checks the tool works; its figures mean nothing.
// --cpu-prof DIR starts every parlayd child with --cpu-prof (a .cpuprofile per thread lands in DIR).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { machineInfo } from './machine.js';
import { npmStartNodeFlags } from './server.js';
import { resultsDir, writeScenario, writeSummary, type Results, type RunMeta } from './report.js';
import { ab } from './scenarios/ab.js';
import { cluster } from './scenarios/cluster.js';
import { ceiling } from './scenarios/ceiling.js';
import type { RunContext, Scenario } from './scenarios/context.js';
import { fanout } from './scenarios/fanout.js';
import { get } from './scenarios/get.js';
import { getWrk } from './scenarios/get-wrk.js';
import { handshakeScenario } from './scenarios/handshake.js';
import { memory } from './scenarios/memory.js';
import { micro } from './scenarios/micro.js';
import { signed, unsigned } from './scenarios/rfq-ladder.js';
import { shards } from './scenarios/shards.js';
import { storageBound } from './scenarios/storage-bound.js';
import { oracle } from './scenarios/oracle.js';
import { overload } from './scenarios/overload.js';
import { Progress } from '../../scripts/progress.js';

const SCENARIOS: ReadonlyArray<Scenario<unknown>> = [
  ceiling,
  micro,
  get,
  unsigned,
  signed,
  storageBound,
  fanout,
  handshakeScenario,
  shards,
  memory,
  oracle,
  overload,
  getWrk,
  ab,
  cluster,
];

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      quick: { type: 'boolean', default: false },
      'cpu-prof': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log('usage: node dist/bench/load/index.js [scenario ...] [--quick] [--cpu-prof DIR]\n');
    for (const s of SCENARIOS) console.log(`  ${s.name.padEnd(10)} ${s.describe}`);
    return;
  }
  const unknown = positionals.filter((name) => !SCENARIOS.some((s) => s.name === name));
  if (unknown.length > 0) throw new Error(`unknown scenario(s): ${unknown.join(', ')}; known: ${SCENARIOS.map((s) => s.name).join(', ')}`);
  const selected =
    positionals.length === 0 ? SCENARIOS.filter((s) => s.isOptIn !== true) : SCENARIOS.filter((s) => positionals.includes(s.name));

  const startedMs = performance.now();
  // Scenarios done of those selected, on a terminal only (scripts/progress.ts); log lines print above it.
  const progress = new Progress('bench:load', selected.length);
  const meta: RunMeta = { runId: new Date().toISOString().replace(/[:.]/g, '-'), isQuick: values.quick, machine: machineInfo() };
  const ctx: RunContext = {
    isQuick: values.quick,
    runId: meta.runId,
    // Every parlayd child runs with npm start's Node flags; BENCH_NODE_ARGS replaces them for experiments
    // (BENCH_NODE_ARGS=" " runs without any: V8's default parallel GC).
    serverNodeArgs: [
      ...(values['cpu-prof'] === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${values['cpu-prof']}`]),
      ...(process.env['BENCH_NODE_ARGS']?.split(' ').filter((a) => a !== '') ?? npmStartNodeFlags()),
    ],
    results: new Map(),
    log: (message) => progress.print(`[${((performance.now() - startedMs) / 1000).toFixed(1).padStart(6)} s] ${message}`),
  };
  ctx.log(
    `run ${meta.runId}: ${meta.machine.cores} cores, ${meta.machine.cpuModel}, node ${meta.machine.node}${values.quick ? ' (quick)' : ''}`,
  );
  for (const [done, scenario] of selected.entries()) {
    progress.update(done, scenario.name);
    ctx.log(`--- ${scenario.name}: ${scenario.describe}`);
    const result = await scenario.run(ctx);
    ctx.results.set(scenario.name, result);
    // bench:micro writes micro.json itself (same envelope, this run's id).
    if (scenario.name !== 'micro') writeScenario(meta, scenario.name, result);
  }
  progress.end();

  // Scenarios not run now keep their last file; the summary says which run each came from.
  const results: Record<string, unknown> = {};
  const earlier: string[] = [];
  for (const scenario of SCENARIOS) {
    const now = ctx.results.get(scenario.name);
    if (now !== undefined) results[scenario.name] = now;
    else {
      const file = join(resultsDir, `${scenario.name}.json`);
      if (!existsSync(file)) continue;
      const stored = JSON.parse(readFileSync(file, 'utf8')) as { runId?: string; result?: unknown };
      if (stored.result === undefined) continue;
      results[scenario.name] = stored.result;
      earlier.push(`${scenario.name} (run ${stored.runId ?? 'unknown'})`);
    }
  }
  writeSummary(meta, results as Results, earlier);
  ctx.log(`done in ${((performance.now() - startedMs) / 1000).toFixed(0)} s; results in ${resultsDir}`);
}

await main().catch((err: unknown) => {
  // A failed scenario stops the run: its server child is stopped by its own `finally`, the rest on exit.
  console.error(`bench:load failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
});
