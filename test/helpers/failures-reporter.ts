// The test runner's reporter for `npm test`: Node's TAP, then a list of the tests that failed, last.
//
// Why: CI shows only the tail of what a run printed. With TAP alone a failure deep in the log is a
// "# fail 1" and nothing else; here its file, name and first lines of error come after the totals.
import type { TestEvent } from 'node:test/reporters';
import { tap } from 'node:test/reporters';

interface Failure {
  readonly file: string;
  readonly name: string;
  readonly error: string;
}

/** Keeps to the first lines of an error: where it was thrown and why, not the whole stack. */
const ERROR_LINES = 12;

export default async function* failuresReporter(source: AsyncIterable<TestEvent>): AsyncGenerator<string, void> {
  const failures: Failure[] = [];
  async function* watched(): AsyncGenerator<TestEvent> {
    for await (const event of source) {
      if (event.type === 'test:fail') {
        const failure = failureOf(event.data);
        if (failure) failures.push(failure);
      }
      yield event;
    }
  }
  yield* tap(watched() as Parameters<typeof tap>[0]);
  if (failures.length === 0) return;
  yield `\n# ${failures.length} failed:\n`;
  for (const f of failures) {
    yield `#   ${f.file} › ${f.name}\n`;
    for (const line of f.error.split('\n').slice(0, ERROR_LINES)) yield `#       ${line}\n`;
  }
}

/** A failure of its own, or none for a suite that failed because a test in it did (that test is listed). */
function failureOf(data: unknown): Failure | undefined {
  const d = data as { name: string; file?: string; details: { error: unknown } };
  const error = d.details.error as { failureType?: string; cause?: unknown; exitCode?: number | null; signal?: string | null } | undefined;
  if (error?.failureType === 'subtestsFailed') return undefined;
  const cause = error?.cause ?? error;
  let text = cause instanceof Error ? (cause.stack ?? String(cause)) : String(cause);
  // A file that ended on its own (a crash, an exit) has no stack; how it ended is the clue.
  if (error?.exitCode != null || error?.signal != null) text += ` (exit code ${error.exitCode}, signal ${error.signal})`;
  const ours = text.split('\n').filter((line) => !/\(node:|at node:|at async Promise\.all/.test(line));
  return { file: d.file ?? '(no file)', name: d.name, error: ours.join('\n') };
}
