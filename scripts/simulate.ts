// `npm run simulate -- --seeds 1000 [--from 1] [--owners 3] [--operations 10000] [--repeat 0.3]`: runs the engine's seeded
// simulator (test/helpers/engine-sim.ts) over many seeds and prints every failing seed with its failures;
// `--seed N` replays one seed and prints its report; `--repeat P` has clients send a call again before its
// answer with chance P (at least once, as over NATS). Exits 1 when any seed fails. `npm test` runs a few seeds
// (test/engine/simulator.test.ts); this is for thousands.
import { parseArgs } from 'node:util';
import { simulate, type SimOptions } from '../test/helpers/engine-sim.js';

const { values } = parseArgs({
  options: {
    seed: { type: 'string' },
    seeds: { type: 'string', default: '200' },
    from: { type: 'string', default: '1' },
    owners: { type: 'string', default: '3' },
    operations: { type: 'string', default: '10000' },
    'crash-chance': { type: 'string', default: '0.002' },
    repeat: { type: 'string' },
  },
});

const base: Omit<SimOptions, 'seed'> = {
  owners: Number(values.owners),
  operations: Number(values.operations),
  users: 12,
  makers: 4,
  crashChance: Number(values['crash-chance']),
  ...(values.repeat === undefined ? {} : { repeatChance: Number(values.repeat) }),
};
const bigints = (_key: string, value: unknown) => (typeof value === 'bigint' ? value.toString() : value);

if (values.seed !== undefined) {
  const report = simulate({ ...base, seed: Number(values.seed) });
  console.log(JSON.stringify(report, bigints, 2));
  process.exitCode = report.failures.length === 0 ? 0 : 1;
} else {
  const from = Number(values.from);
  const count = Number(values.seeds);
  const startMs = Date.now();
  let failed = 0;
  let crashes = 0;
  for (let seed = from; seed < from + count; seed++) {
    const report = simulate({ ...base, seed });
    crashes += report.crashes;
    if (report.failures.length > 0) {
      failed++;
      const again = values.repeat === undefined ? '' : ` --repeat ${values.repeat}`;
      console.log(
        `seed ${seed} FAILED (replay: npm run simulate -- --seed ${seed}${again}):\n  ${report.failures.slice(0, 10).join('\n  ')}`,
      );
    }
  }
  const seconds = ((Date.now() - startMs) / 1000).toFixed(1);
  console.log(
    `${count} seeds from ${from} (${base.owners} owners, ${base.operations} operations each, ${crashes} crashes): ${failed} failed, ${seconds} s`,
  );
  process.exitCode = failed === 0 ? 0 : 1;
}
