// A fixture process that reports and then ends itself with SIGKILL, and the test side that runs one. For
// fixtures whose store had a write fail for want of space: lmdb-js 3.5.6 then sometimes aborts the process
// at its teardown, after our last call (docs/reliability.md, "lmdb-js's exit after a failed write"). Ending
// before that teardown keeps lmdb-js's exit out of a result that is about our code.
import { execFile } from 'node:child_process';

/** In the fixture: writes `report` as one JSON line, then kills this process once the line is written. */
export function reportAndKill(report: unknown): void {
  process.stdout.write(`${JSON.stringify(report)}\n`, () => process.kill(process.pid, 'SIGKILL'));
}

/**
 * In the test: runs `fixture` with `args` and returns its report. Rejects, with its stderr, if it ended any
 * other way than its own SIGKILL (an exit, a throw, an abort before it reported).
 */
export function runKilledFixture<T>(fixture: string, args: readonly string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [fixture, ...args], (error, stdout, stderr) => {
      if (error?.signal !== 'SIGKILL') return reject(new Error(`the fixture ended otherwise (${String(error ?? 'exit 0')}): ${stderr}`));
      resolve(JSON.parse(stdout.trim().split('\n').at(-1)!) as T);
    });
  });
}
