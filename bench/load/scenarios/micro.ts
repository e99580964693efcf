// Scenario `micro`: runs `bench:micro` (bench/micro/index.ts, tinybench) as a child process in this run, so
// the signature recoveries per second that the `signed` target divides by come from the same run of the
// same machine as the load figures.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { repoRoot } from '../server.js';
import type { Scenario } from './context.js';

export interface MicroRow {
  stage: string;
  opsPerS: number;
  p50Us: number;
  p99Us: number;
  samples: number;
}

export interface MicroResult {
  recoverBackend: 'native' | 'noble';
  cores: number;
  recoveriesPerSAllCores: number;
  rows: MicroRow[];
}

export const micro: Scenario<MicroResult> = {
  name: 'micro',
  describe: 'bench:micro stage table in the same run (recoveries per second: the signed denominator)',
  async run(ctx) {
    const args = [resolve(repoRoot, 'dist/bench/micro/index.js'), ...(ctx.isQuick ? ['--quick'] : [])];
    const code = await new Promise<number | null>((done) => {
      const child = spawn(process.execPath, args, {
        stdio: ['ignore', 'inherit', 'inherit'],
        env: { ...process.env, BENCH_RUN_ID: ctx.runId },
      });
      child.once('exit', done);
    });
    if (code !== 0) throw new Error(`bench:micro exited with ${code}`);
    const micro = (JSON.parse(readFileSync(resolve(repoRoot, 'bench/results/micro.json'), 'utf8')) as { result: MicroResult }).result;
    ctx.log(`recover backend ${micro.recoverBackend}: ${micro.recoveriesPerSAllCores} recoveries/s on ${micro.cores} cores`);
    return micro;
  },
};
